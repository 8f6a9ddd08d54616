"""Lone surrogates become U+FFFD; everything else passes through untouched."""

from __future__ import annotations

from waymark.base.text import mend, mend_all


def test_mend_replaces_only_lone_surrogates():
    assert mend("plain ascii") == "plain ascii"
    assert mend("emoji 🚀 and é") == "emoji 🚀 and é"
    assert mend("bad \udcff byte \ud800") == "bad \ufffd byte \ufffd"
    assert mend("bad \udcff byte").encode("utf-8") == "bad \ufffd byte".encode()


def test_mend_all_walks_json_like_values():
    value = {"k\udcff": ["a\ud800", {"n": 1, "s": "ok"}], "none": None, "t": True}
    assert mend_all(value) == {"k\ufffd": ["a\ufffd", {"n": 1, "s": "ok"}], "none": None, "t": True}
