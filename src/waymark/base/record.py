"""Named tuples without `collections`: `record("Memory", "id type title", defaults=(...))`.

Used exactly like `collections.namedtuple` (type checkers are told it is one): positional or
keyword construction with defaults, attributes, `_fields`, `_field_defaults`, `_make`,
`_replace`, `_asdict`, equality, unpacking, pickling. Why: importing `collections` and building
the eight namedtuples a hook needs costs a hook process about 4 ms; this builds each from
plain functions (no `eval`) over the C accessor `collections` itself uses.
"""

from __future__ import annotations

try:
    from _collections import _tuplegetter
except ImportError:  # not CPython: a plain property does the same
    from operator import itemgetter as _itemgetter

    def _tuplegetter(index: int, doc: str) -> property:
        return property(_itemgetter(index), doc=doc)


TYPE_CHECKING = False
if TYPE_CHECKING:  # checkers know namedtuple's fields; at run time it is the function below
    from collections import namedtuple as record

_new = tuple.__new__


def _record(typename: str, field_names: str, *, defaults: tuple = ()) -> type:
    """A tuple subclass named `typename` with the fields named in `field_names` (spaces or
    commas); the last len(defaults) fields take those defaults."""
    names = tuple(field_names.replace(",", " ").split())
    size = len(names)
    if len(defaults) > size:
        raise TypeError("got more default values than field names")
    if len(set(names)) < size or any(not n.isidentifier() or n.startswith("_") for n in names):
        raise ValueError(f"field names must be distinct identifiers not starting with _: {names}")
    field_defaults = dict(zip(names[size - len(defaults) :], defaults, strict=True))
    order = {name: i for i, name in enumerate(names)}

    def __new__(cls, *args, **kwargs):  # type: ignore[no-untyped-def]
        if len(args) == size and not kwargs:
            return _new(cls, args)
        if len(args) > size:
            raise TypeError(f"{typename}() takes {size} arguments but {len(args)} were given")
        values = list(args)
        for name in names[len(args) :]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in field_defaults:
                values.append(field_defaults[name])
            else:
                raise TypeError(f"{typename}() missing required argument: {name!r}")
        if kwargs:
            name = next(iter(kwargs))
            why = "multiple values for" if name in order else "an unexpected keyword"
            raise TypeError(f"{typename}() got {why} argument {name!r}")
        return _new(cls, values)

    def _make(cls, iterable):  # type: ignore[no-untyped-def]
        row = _new(cls, iterable)
        if len(row) != size:
            raise TypeError(f"expected {size} arguments, got {len(row)}")
        return row

    def _replace(self, **changes):  # type: ignore[no-untyped-def]
        row = _new(type(self), [changes.pop(n, v) for n, v in zip(names, self, strict=True)])
        if changes:
            raise ValueError(f"got unexpected field names: {list(changes)!r}")
        return row

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={v!r}" for n, v in zip(names, self, strict=True))
        return f"{type(self).__name__}({inner})"

    def _asdict(self) -> dict:
        return dict(zip(names, self, strict=True))

    def __getnewargs__(self) -> tuple:
        return tuple(self)

    body: dict[str, object] = {
        "__slots__": (),
        "__doc__": f"{typename}({', '.join(names)})",
        "__new__": __new__,
        "__repr__": __repr__,
        "__getnewargs__": __getnewargs__,
        "__match_args__": names,
        "_fields": names,
        "_field_defaults": field_defaults,
        "_make": classmethod(_make),
        "_replace": _replace,
        "_asdict": _asdict,
    }
    for i, name in enumerate(names):
        body[name] = _tuplegetter(i, f"Alias for field number {i}")
    cls = type(typename, (tuple,), body)
    try:  # the module that called us, as namedtuple does (pickling finds the class by it)
        import sys

        cls.__module__ = sys._getframe(1).f_globals.get("__name__", "__main__")
    except (AttributeError, ValueError):
        pass
    return cls


if not TYPE_CHECKING:
    record = _record
