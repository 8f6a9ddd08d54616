"""`waymark.base.record`: named tuples without `collections`, behaving as namedtuple does."""

from __future__ import annotations

import collections
import copy
import pickle

import pytest

from waymark.base.record import record

Point = record("Point", "x y label", defaults=(None,))
Twin = collections.namedtuple("Twin", "x y label", defaults=(None,))


class Child(record("_Child", "a b")):
    __slots__ = ()

    def total(self) -> int:
        return self.a + self.b


def test_it_builds_and_reads_like_a_namedtuple():
    for kind in (Point, Twin):
        p = kind(1, 2)
        assert (p.x, p.y, p.label) == (1, 2, None)
        assert kind(1, y=2, label="a") == kind(x=1, y=2, label="a") == (1, 2, "a")
        assert kind._make([3, 4, 5]) == (3, 4, 5)
        assert p._replace(label="b") == (1, 2, "b")
        assert p._asdict() == {"x": 1, "y": 2, "label": None}
        assert kind._fields == ("x", "y", "label")
        assert kind._field_defaults == {"label": None}
        x, y, label = p
        assert (x, y, label, p[1], len(p)) == (1, 2, None, 2, 3)
    assert repr(Point(1, 2)) == "Point(x=1, y=2, label=None)"
    assert Point(1, 2) == Twin(1, 2)  # both are tuples
    assert hash(Point(1, 2)) == hash((1, 2, None))
    assert Child(2, 3).total() == 5 and repr(Child(2, 3)) == "Child(a=2, b=3)"
    with pytest.raises(AttributeError):
        Point(1, 2).x = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Child(1, 2).extra = 1  # type: ignore[attr-defined]


def test_it_copies_and_pickles():
    p = Point(1, [2], "c")
    assert pickle.loads(pickle.dumps(p)) == p
    assert copy.copy(p) == p and copy.deepcopy(p) == p and copy.deepcopy(p).y is not p.y
    assert type(pickle.loads(pickle.dumps(p))) is Point


def test_wrong_arguments_fail_as_namedtuple_fails():
    for bad in (lambda: Point(1), lambda: Point(1, 2, 3, 4), lambda: Point(1, 2, z=3)):
        with pytest.raises(TypeError):
            bad()
    with pytest.raises(TypeError, match="multiple values"):
        Point(1, 2, x=3)
    with pytest.raises(TypeError):
        Point._make([1, 2])
    with pytest.raises(ValueError):
        Point(1, 2)._replace(z=1)
    with pytest.raises(ValueError):
        record("Bad", "a a")
    with pytest.raises(ValueError):
        record("Bad", "a _b")
    with pytest.raises(TypeError):
        record("Bad", "a", defaults=(1, 2))
