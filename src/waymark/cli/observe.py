"""Implementation evidence on memories: waymark observe, waymark observations."""

from __future__ import annotations

from waymark.cli.common import Context, add_command, bounded, emit
from waymark.errors import InvalidArgument
from waymark.memories import observations

TYPE_CHECKING = False  # typing costs a command ~3 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands,
        "observe",
        common,
        handler=cmd_observe,
        help="attach what you report about an active memory (requested, implemented, a test "
        "passed or failed) with the files it rests on; Waymark hashes them and says on every "
        "read whether they changed since",
        example="waymark observe 01JD... --status REPORTED_PASS --link test:tests/test_refund.py"
        '#test_refund --link implementation:src/refund.py --note "pytest -q: 4 passed"',
    )
    p.add_argument("id", help="the active memory")
    p.add_argument("--status", required=True, choices=observations.STATUSES)
    p.add_argument(
        "--link",
        action="append",
        default=[],
        metavar="ROLE:PATH[#LOCATOR]",
        help=f"repeatable, at most 10; ROLE is one of {', '.join(observations.ROLES)}",
    )
    p.add_argument("--note", help="what was run and how (REPORTED_PASS and _FAIL need one)")
    p = add_command(
        commands,
        "observations",
        common,
        handler=cmd_observations,
        help="a memory's observations, newest first, each checked against its files now",
        example="waymark observations 01JD... --limit 5",
    )
    p.add_argument("id")
    p.add_argument("--limit", type=bounded(1, observations.PAGE_MAX), default=20)
    p.add_argument("--offset", type=bounded(0, 1_000_000), default=0)


def parse_link(text: str) -> dict[str, str]:
    """ROLE:PATH[#LOCATOR] -> {role, path, locator?}."""
    role, sep, rest = text.partition(":")
    if not sep or not rest or role not in observations.ROLES:
        raise InvalidArgument(
            f"--link {text!r} is not ROLE:PATH[#LOCATOR] with ROLE one of "
            f"{', '.join(observations.ROLES)}",
            fields=["link"],
        )
    path, _, locator = rest.partition("#")
    return {"role": role, "path": path, **({"locator": locator} if locator else {})}


def cmd_observe(args: argparse.Namespace, ctx: Context) -> int:
    done = observations.observe(
        ctx.conn,
        ctx.project(),
        args.id,
        args.status,
        [parse_link(link) for link in args.link],
        args.note,
    )
    emit(done, ctx.as_json, "\n".join(lines(done)))
    return 0


def lines(obs: dict[str, Any]) -> list[str]:
    """An observation as people read it: a header, then a line per link with its state."""
    state = f" [{obs['state']}]" if obs.get("state") else ""
    out = [f"{obs['id']}  {obs['created_at'][:19].replace('T', ' ')}  {obs['status']}{state}"]
    if obs.get("note"):
        out.append(f"    note: {obs['note']}")
    for link in obs["links"]:
        where = f"#{link['locator']}" if link.get("locator") else ""
        why = f" ({link['reason']})" if link.get("reason") else ""
        out.append(f"    {link['role']:<14} {link['path']}{where}  {link['state']}{why}")
    return out


def cmd_observations(args: argparse.Namespace, ctx: Context) -> int:
    project = ctx.project(create=False)
    page = observations.history(ctx.conn, project, args.id, limit=args.limit, offset=args.offset)
    text = [line for obs in page["observations"] for line in lines(obs)]
    if not text:
        text = [f"no observations of {page['memory_id']} here"]
    if page["has_more"]:
        text.append(f"... {page['total']} in all; more with --offset {page['next_offset']}")
    emit(page, ctx.as_json, "\n".join(text))
    return 0
