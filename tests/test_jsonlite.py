"""jsonlite must agree with json exactly: hooks read and write the same data as everything else."""

from __future__ import annotations

import json
import math

import pytest

from conftest import isolated
from waymark.base import jsonlite

VALUES = [
    {"b": 1, "a": [1, 2.5, -3e-7, True, False, None], "é": 'naïve ☃ \u2028 \x00 "q" \\'},
    [],
    {},
    "plain",
    "emoji 🚀 and a lone surrogate \ud800",
    12345678901234567890,
    -0.0,
    1e308,
    {"nested": {"deep": [{"x": [[[]]]}]}, "1": "key order", "0": "kept"},
    [float("inf"), float("-inf")],
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("sort_keys", [False, True])
@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("separators", [None, (",", ":")])
def test_dumps_is_byte_identical_to_json(value, sort_keys, ensure_ascii, separators):
    kw = {"sort_keys": sort_keys, "ensure_ascii": ensure_ascii, "separators": separators}
    assert jsonlite.dumps(value, **kw) == json.dumps(value, **kw)


@pytest.mark.parametrize("value", VALUES)
def test_loads_reads_back_what_json_wrote(value):
    text = json.dumps(value)
    got, want = jsonlite.loads(text), json.loads(text)
    assert json.dumps(got) == json.dumps(want)  # NaN-safe equality
    assert json.dumps(jsonlite.loads(text.encode("utf-8"))) == json.dumps(want)


def test_loads_accepts_surrounding_whitespace_and_json_constants():
    assert jsonlite.loads(' \n {"a": NaN, "b": -Infinity} \t').keys() == {"a", "b"}
    assert math.isnan(jsonlite.loads("NaN")) and jsonlite.loads("-Infinity") == float("-inf")


@pytest.mark.parametrize(
    "bad", ["", "   ", "{", '{"a": 1} x', "[1,]", "{'a': 1}", "nul", "\ufeff{}"]
)
def test_loads_rejects_what_json_rejects_with_a_value_error(bad):
    with pytest.raises(ValueError):
        json.loads(bad)
    with pytest.raises(ValueError):
        jsonlite.loads(bad)


def test_loads_of_bytes_in_another_encoding_falls_back_to_json():
    assert jsonlite.loads('{"a": "ü"}'.encode("utf-16")) == {"a": "ü"}


def test_dumps_refuses_what_json_refuses_and_stays_usable():
    circular: list = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular"):
        jsonlite.dumps(circular)
    with pytest.raises(TypeError, match="not JSON serializable"):
        jsonlite.dumps([1, {2, 3}])
    shared = [1]
    assert jsonlite.dumps([shared, shared]) == "[[1], [1]]"  # no stale markers after an error


def test_other_arguments_go_to_json():
    assert jsonlite.dumps({"a": [1]}, indent=2) == json.dumps({"a": [1]}, indent=2)


def test_importing_jsonlite_loads_neither_json_nor_re():
    code = "import sys, waymark.base.jsonlite as j; j.dumps(j.loads('[1]')); print('json' in sys.modules, 're' in sys.modules)"
    assert isolated(code).split() == ["False", "False"]


def test_invalid_json_in_a_fresh_process_raises_a_value_error():
    # _json raises its errors through json.decoder, which a hook process has not imported.
    code = (
        "import waymark.base.jsonlite as j\n"
        "for bad in ('{\"a\": \"unterminated', '[1,]', '{\"a\" 1}'):\n"
        "    try:\n"
        "        j.loads(bad)\n"
        "    except ValueError as exc:\n"
        "        print(type(exc).__name__)\n"
    )
    assert isolated(code).split() == ["JSONDecodeError"] * 3
