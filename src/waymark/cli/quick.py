"""A command line parsed without argparse, when it is a plain one.

argparse imports `re` and `enum`: 8 ms, two thirds of the bare interpreter, before any of
Waymark runs, on every `waymark list` an agent makes. The commands register their flags once
(for argparse); here the asked command's registration is recorded instead, and an argv that
uses it plainly is parsed from the record: exact flag names, `--flag=value` or the value as
the next word (one that does not start with '-'), positionals in one run, choices and types
as argparse checks them. Anything else (help, an unknown or abbreviated flag, `--`, a value
that starts with '-', a bad value, a custom action, a missing required flag) returns None and
argparse parses it, with its own messages. `tests/test_cli_quick.py` holds the two to the
same namespace on every command's example and a corpus of command lines.
"""

from __future__ import annotations

from waymark.cli.table import MODULE_OF

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

_PLAIN_ACTIONS = ("store", "store_true", "store_false", "append")


class Namespace:
    """What argparse's Namespace is to a handler: the parsed values as attributes."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def __contains__(self, name: str) -> bool:
        return name in self.__dict__


class Unsupported(Exception):
    """The command line, or the command, is not a plain one: argparse takes it."""


class _Option:
    __slots__ = ("names", "dest", "action", "nargs", "type", "choices", "default", "const",
                 "required")  # fmt: skip

    def __init__(self, names: tuple[str, ...], kw: dict[str, Any]) -> None:
        action = kw.pop("action", "store")
        if action not in _PLAIN_ACTIONS:
            raise Unsupported(f"action {action!r}")
        nargs = kw.pop("nargs", None)
        if nargs not in (None, "?", 2) or (nargs is not None and action != "store"):
            raise Unsupported(f"nargs {nargs!r}")
        positional = not names[0].startswith("-")
        self.names, self.action, self.nargs = names, action, nargs
        long = [n for n in names if n.startswith("--")]
        self.dest = kw.pop("dest", None) or (
            names[0]
            if positional
            else (long[0] if long else names[0]).lstrip("-").replace("-", "_")
        )
        self.type: Callable[[str], Any] | None = kw.pop("type", None)
        self.choices = kw.pop("choices", None)
        self.const = kw.pop("const", None)
        self.required = bool(kw.pop("required", False))
        default = {"store_true": False, "store_false": True}.get(action)
        self.default = kw.pop("default", default)
        for said in ("help", "metavar"):
            kw.pop(said, None)
        if kw:
            raise Unsupported(f"arguments {sorted(kw)}")

    def value(self, text: str) -> Any:
        value = self.type(text) if self.type is not None else text  # any error: argparse's
        if self.choices is not None and value not in self.choices:
            raise Unsupported("not one of the choices")
        return value


class Spec:
    """One parser's registration, recorded."""

    quick = True  # `add_command` gives a recorder no argparse formatter

    def __init__(self, parents: Sequence[Spec] = ()) -> None:
        self.options: dict[str, _Option] = {}
        self.positionals: list[_Option] = []
        self.order: list[_Option] = []
        self.defaults: dict[str, Any] = {}
        self.groups: list[tuple[bool, list[_Option]]] = []
        self.sub: tuple[str | None, bool, dict[str, Spec]] | None = None
        self.broken: str | None = None  # why this command cannot be parsed here
        for parent in parents:
            for option in parent.order:
                self._add(option)

    def _add(self, option: _Option) -> None:
        self.order.append(option)
        if option.names[0].startswith("-"):
            self.options.update(dict.fromkeys(option.names, option))
        else:
            self.positionals.append(option)

    def add_argument(self, *names: str, **kw: Any) -> _Option | None:
        try:
            option = _Option(names, dict(kw))
        except Unsupported as exc:
            self.broken = str(exc)
            return None
        self._add(option)
        return option

    def set_defaults(self, **kw: Any) -> None:
        self.defaults.update(kw)
        for option in self.order:
            if option.dest in kw:
                option.default = kw[option.dest]

    def add_mutually_exclusive_group(self, required: bool = False) -> _Group:
        group = _Group(self)
        self.groups.append((required, group.members))
        return group

    def add_subparsers(self, dest: str | None = None, required: bool = False, **_: Any) -> _Subs:
        self.sub = (dest, required, {})
        return _Subs(self.sub[2])

    def register(self, *_: Any) -> None:  # a custom action or type registry
        self.broken = "a registry entry"

    def add_parser(self, name: str, parents: Sequence[Spec] = (), **_: Any) -> Spec:
        raise Unsupported("a command's parser has no commands of its own")


class _Group:
    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.members: list[_Option] = []

    def add_argument(self, *names: str, **kw: Any) -> None:
        option = self.spec.add_argument(*names, **kw)
        if option is not None:
            self.members.append(option)


class _Subs:
    def __init__(self, specs: dict[str, Spec]) -> None:
        self.specs = specs

    def add_parser(self, name: str, parents: Sequence[Spec] = (), **_: Any) -> Spec:
        spec = self.specs[name] = Spec(parents)
        return spec


class _Skipped:
    """Another command of the same module: its registration is not recorded."""

    quick = True

    def __getattr__(self, name: str) -> Callable[..., _Skipped]:
        return lambda *_, **__: self


class _Commands:
    """The `commands` a module's `register` is given: only `wanted` is recorded."""

    quick = True

    def __init__(self, wanted: str) -> None:
        self.wanted = wanted
        self.spec: Spec | None = None

    def add_parser(self, name: str, parents: Sequence[Spec] = (), **_: Any) -> Spec | _Skipped:
        if name != self.wanted:
            return _Skipped()
        spec = self.spec = Spec(parents)
        return spec


def common() -> Spec:
    """The flags every command takes (`dispatch.build_parser` registers the same)."""
    spec = Spec()
    spec.add_argument("--project")
    spec.add_argument("--json", action="store_true")
    return spec


def parse(argv: Sequence[str]) -> Namespace | None:
    """`argv` (the command first) as argparse would parse it, or None when argparse must."""
    if not argv or argv[0] not in MODULE_OF:
        return None
    import sys

    commands = _Commands(argv[0])
    try:
        name = f"waymark.cli.{MODULE_OF[argv[0]]}"
        __import__(name)  # not importlib.import_module: `importlib` (and `warnings`) ~0.8 ms
        module = sys.modules[name]
        module.register(commands, common())
        if commands.spec is None:
            raise Unsupported("not registered")
        found = _parse(commands.spec, list(argv[1:]))
    except Exception:  # Unsupported, or a type's own error (a bad number): argparse words it
        return None
    return Namespace(version=None, command=argv[0], **found)


def _parse(spec: Spec, tokens: list[str]) -> dict[str, Any]:
    if spec.broken:
        raise Unsupported(spec.broken)
    found: dict[str, Any] = {}
    for option in spec.order:
        found.setdefault(option.dest, _copy(option.default))
    for dest, value in spec.defaults.items():
        found.setdefault(dest, value)
    given: set[int] = set()
    words: list[str] = []
    flag_after_words = False  # argparse matches positionals run by run: only one run here
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--" or token == "-":
            raise Unsupported("a separator")
        if not token.startswith("-"):
            if spec.sub is not None and not spec.positionals:
                return _into_sub(spec, tokens[i:], found, given)
            if flag_after_words:
                raise Unsupported("positional words split by flags")
            words.append(token)
            i += 1
            continue
        flag_after_words = bool(words)
        i = _option(spec, tokens, i, found, given)
    _positionals(spec, words, found)
    _check(spec, given)
    if spec.sub is not None:
        if spec.sub[1]:
            raise Unsupported("a required subcommand")
        found.setdefault(spec.sub[0] or "", None)
    return _typed_defaults(spec, found, given)


def _option(spec: Spec, tokens: list[str], i: int, found: dict, given: set[int]) -> int:
    """Read the flag at tokens[i] (and its values) into `found`; the next index."""
    name, eq, inline = (
        tokens[i].partition("=") if tokens[i].startswith("--") else (tokens[i], "", "")
    )
    option = spec.options.get(name)
    if option is None:
        raise Unsupported(f"flag {name}")
    given.add(id(option))
    i += 1
    if option.action in ("store_true", "store_false"):
        if eq:
            raise Unsupported("a value for a switch")
        found[option.dest] = option.action == "store_true"
        return i
    if option.nargs == 2:
        if eq or len(tokens) < i + 2 or any(t.startswith("-") for t in tokens[i : i + 2]):
            raise Unsupported("two values")
        found[option.dest] = [option.value(t) for t in tokens[i : i + 2]]
        return i + 2
    if eq:
        text: str | None = inline
    elif i < len(tokens) and not tokens[i].startswith("-"):
        text, i = tokens[i], i + 1
    elif option.nargs == "?":
        text = None
    else:
        raise Unsupported("a flag without its value")
    value = option.const if text is None else option.value(text)
    if option.action == "append":
        found[option.dest] = [*(found.get(option.dest) or []), value]
    else:
        found[option.dest] = value
    return i


def _positionals(spec: Spec, words: list[str], found: dict[str, Any]) -> None:
    needed = sum(1 for p in spec.positionals if p.nargs is None)
    if not needed <= len(words) <= len(spec.positionals):
        raise Unsupported("positional words")
    extra = len(words) - needed
    for option in spec.positionals:
        if option.nargs is None or extra > 0:
            extra -= option.nargs == "?"
            found[option.dest] = option.value(words.pop(0))
        elif isinstance(option.default, str):
            found[option.dest] = option.value(option.default)


def _check(spec: Spec, given: set[int]) -> None:
    for option in spec.order:
        if option.required and id(option) not in given:
            raise Unsupported(f"{option.names[0]} is required")
    for required, members in spec.groups:
        chosen = sum(1 for m in members if id(m) in given)
        if chosen > 1 or (required and chosen == 0):
            raise Unsupported("a mutually exclusive group")


def _into_sub(
    spec: Spec, tokens: list[str], found: dict[str, Any], given: set[int]
) -> dict[str, Any]:
    assert spec.sub is not None
    dest, _, specs = spec.sub
    sub = specs.get(tokens[0])
    if sub is None:
        raise Unsupported("subcommand")
    _check(spec, given)
    if dest:
        found[dest] = tokens[0]
    return {**found, **_parse(sub, tokens[1:])}


def _typed_defaults(spec: Spec, found: dict[str, Any], given: set[int]) -> dict[str, Any]:
    """argparse runs a flag's type over a default given as a string, when the flag was not."""
    for option in spec.order:
        untouched = id(option) not in given and found.get(option.dest) is option.default
        if untouched and option.names[0].startswith("-") and isinstance(option.default, str):
            found[option.dest] = option.value(option.default)
    return found


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value
