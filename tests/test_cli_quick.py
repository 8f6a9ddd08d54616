"""A plain command line parsed without argparse (`waymark.cli.quick`) gives the namespace
argparse gives, and anything that is not plain is left to argparse."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from test_help_examples import examples
from waymark.cli import quick
from waymark.cli.dispatch import build_parser
from waymark.errors import UsageError

ID = "01JDW3K7Q8R9S0T1V2W3X4Y5Z6"
# What agents and people run most: each must take the quick path.
HOT = [
    ["status"], ["status", "--json"], ["list"], ["list", "--json"],
    ["list", "--type", "decision", "--limit", "5"], ["list", "--query=sqlite", "--tag", "db"],
    ["show", ID], ["show", ID, "--json"], ["checkpoint"], ["checkpoint", "show"],
    ["checkpoint", "show", "--json"], ["map", "impact", "src/app.py"],
    ["map", "impact", "src/app.py", "--depth", "3", "--json"], ["recall", "why apsw"],
    ["recall", "why apsw", "--limit", "3", "--explain"], ["project"], ["project", "list"],
    ["history", ID], ["candidates"], ["config", "recall.half_life_days"], ["doctor"],
    ["checkpoint", "revise", "--progress", "a", "--progress", "b", "--test", "t=pass"],
    ["list", "--project", "shop"],
]  # fmt: skip
# Not plain: argparse must take these (help, errors, abbreviations, separators, ...).
LEFT = [
    ["list", "--help"], ["list", "-h"], ["list", "--lim", "5"], ["list", "--limit", "0"],
    ["list", "--limit", "x"], ["list", "--bogus"], ["show"], ["show", ID, "extra"],
    ["list", "--", "x"], ["list", "--type", "nonsense"], ["map", "impact", "a", "--depth"],
    ["edit", ID, "--add", "x"], ["list", "--json=yes"], ["checkpoint", "sideways"],
    ["review", "cand_1"], ["nonsense"], ["recall", "q", "--limit", "-3"],
]  # fmt: skip


def argparse_says(argv: list[str]) -> dict | None:
    try:
        return vars(build_parser(argv[0]).parse_args(argv))
    except (UsageError, SystemExit):
        return None


def example_lines() -> list[list[str]]:
    out = []
    for line in examples().values():
        for part in line.split("&&"):
            words = shlex.split(part.strip())
            if words and words[0] == "waymark":
                out.append(words[1:])
    return out


@pytest.mark.parametrize("argv", HOT + LEFT + example_lines(), ids=" ".join)
def test_the_quick_path_gives_what_argparse_gives_or_leaves_it_to_argparse(argv):
    said = quick.parse(argv)
    expected = argparse_says(argv)
    if said is not None:
        assert expected is not None, "quick parsed what argparse refuses"
        assert vars(said) == expected
    if argv in HOT:
        assert said is not None, "a plain command line left to argparse"
    if argv in LEFT:
        assert said is None


def test_most_examples_take_the_quick_path():
    lines = example_lines()
    taken = [argv for argv in lines if quick.parse(argv) is not None]
    assert len(taken) >= len(lines) - 6, [a for a in lines if quick.parse(a) is None]


def test_a_plain_command_imports_no_argparse_and_help_still_works():
    probe = (
        "import sys\n"
        "from waymark.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print(code, 'argparse' in sys.modules, 're' in sys.modules, file=sys.stderr)\n"
    )
    for argv, loaded in ((["list"], "0 False False"), (["list", "--help"], None)):
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True,
                              text=True, timeout=60)  # fmt: skip
        if loaded is not None:
            assert done.stderr.strip().splitlines()[-1] == loaded, done.stderr
        else:
            assert done.returncode == 0 and "usage: waymark list" in done.stdout
