"""The dashboard's pictures as geometry: small server-rendered SVG charts, no chart bundle.

Each function turns numbers into the shapes `templates/charts.html` draws (every label is
escaped there like any other text); nothing here reads the store.
"""

from __future__ import annotations

import math
from typing import Any

WIDTH = 640
BAR_GAP = 2
LABELS = 200  # the row charts' label column


def nice_max(value: float) -> float:
    """The axis top: `value` rounded up to 1, 2 or 5 times a power of ten."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return float(step * power)
    return float(10 * power)


def columns(points: list[tuple[str, float]], *, height: int = 140) -> dict[str, Any]:
    """Vertical bars, one per (label, value), left to right: {width, height, top, bars:
    [{x, y, w, h, label, value}]}."""
    top = nice_max(max((v for _, v in points), default=0))
    inner = height - 20
    w = min(60.0, max(3.0, (WIDTH - 40) / max(1, len(points)) - BAR_GAP))
    bars = []
    for i, (label, value) in enumerate(points):
        h = inner * value / top
        fits = w >= 6.5 * len(label)  # else only the first and the last are named
        x = 40 + i * (w + BAR_GAP)
        anchor = ("middle", x + w / 2) if fits else (("start", x) if i == 0 else ("end", x + w))
        bars.append({"x": x, "y": inner - h + 4, "w": w, "h": h, "label": label, "value": value,
                     "named": fits or i in (0, len(points) - 1), "anchor": anchor})  # fmt: skip
    return {"width": WIDTH, "height": height, "top": top, "bars": bars, "base": inner + 4}


def rows(items: list[tuple[str, list[tuple[Any, ...]]]], *, row: int = 22) -> dict[str, Any]:
    """Horizontal stacked bars: one row per (label, [(part, value[, said])]), parts left to
    right, on one scale; `said` is the value a part's tooltip names when its width is not
    it (a p95 drawn as the stretch past the p50): {width, height, top, rows: [{y, label,
    total, parts: [{x, w, part, value}]}]}."""
    top = nice_max(max((sum(p[1] for p in parts) for _, parts in items), default=0))
    span = WIDTH - LABELS - 60
    out = []
    for i, (label, parts) in enumerate(items):
        x, drawn = float(LABELS), []
        for part, value, *said in parts:
            w = span * value / top
            if w > 0:
                drawn.append({"x": x, "w": w, "part": part,
                              "value": said[0] if said else value})  # fmt: skip
            x += w
        out.append({"y": 4 + i * row, "label": label, "total": sum(p[1] for p in parts),
                    "parts": drawn, "end": x})  # fmt: skip
    return {"width": WIDTH, "height": 8 + len(items) * row, "top": top, "rows": out,
            "bar": row - 6, "labels": LABELS}  # fmt: skip


def age_buckets(created: list[str], now: str) -> list[tuple[str, float]]:
    """How long the waiting candidates have waited: (bucket, count) for under a day, under a
    week, under four weeks, older; `created` and `now` are ISO 8601 UTC stamps."""
    from datetime import datetime

    def when(stamp: str) -> datetime:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))

    edges = (("under a day", 1), ("1-7 days", 7), ("1-4 weeks", 28), ("older", math.inf))
    counts = dict.fromkeys([name for name, _ in edges], 0)
    end = when(now)
    for stamp in created:
        days = (end - when(stamp)).total_seconds() / 86400
        for name, limit in edges:
            if days < limit:
                counts[name] += 1
                break
    return [(name, float(n)) for name, n in counts.items()]


GRAPH_NODES = 40  # drawn; the list beside the picture names every dependent


def graph(target: str, dependents: list[dict[str, Any]], *, row: int = 26,
          notes: dict[str, int] | None = None) -> dict[str, Any]:  # fmt: skip
    """The impact answer as a picture: the target on the left, each step's dependents in
    the next column, a line from the end of what each reaches to it. A column is as wide
    as its longest label (LABEL_MOST characters at most, the whole in its tooltip), so no
    label is cut by the next column; `notes` counts memories about a path (drawn beside
    it): {width, height, nodes: [{x, y, label, short, depth, notes}], edges: [{x1, y1, x2,
    y2, kind}], left_out}."""
    notes = notes or {}
    shown = dependents[:GRAPH_NODES]
    depth = max((d["depth"] for d in shown), default=0)
    labels: dict[int, list[str]] = {0: [target]}
    for d in shown:
        labels.setdefault(d["depth"], []).append(d["at"])

    def short(label: str) -> str:
        return label if len(label) <= LABEL_MOST else label[: LABEL_MOST - 1] + "…"

    def wide(label: str) -> float:
        count = notes.get(label.partition("::")[0], 0)
        return CHAR * (len(short(label)) + (len(f" {count}") + 2 if count else 0)) + 16

    xs, x = [], 10.0
    for step in range(depth + 1):
        xs.append(x)
        x += max(wide(label) for label in labels.get(step, [""])) + 40
    per: dict[int, int] = {}
    nodes: dict[str, dict[str, Any]] = {
        target: {"x": 10.0, "y": 0.0, "label": target, "short": short(target), "depth": 0,
                 "notes": notes.get(target.partition("::")[0], 0)}}  # fmt: skip
    for d in shown:
        i = per.get(d["depth"], 0)
        per[d["depth"]] = i + 1
        nodes[d["at"]] = {"x": xs[d["depth"]], "y": float(i), "label": d["at"],
                          "short": short(d["at"]), "depth": d["depth"],
                          "notes": notes.get(d["at"].partition("::")[0], 0)}  # fmt: skip
    tall = max([1, *per.values()])
    nodes[target]["y"] = (tall - 1) / 2
    for n in nodes.values():
        n["y"] = 14 + n["y"] * row
    edges = []
    for d in shown:
        via = d["via"]
        reached = nodes.get(via) or nodes.get(via.partition("::")[0]) or nodes[target]
        here = nodes[d["at"]]
        edges.append({"x1": here["x"], "y1": here["y"],
                      "x2": reached["x"] + wide(reached["label"]) + 4, "y2": reached["y"],
                      "kind": d["kind"]})  # fmt: skip
    return {"width": max(WIDTH, x - 30), "height": 14 + tall * row, "nodes": list(nodes.values()),
            "edges": edges, "left_out": len(dependents) - len(shown)}  # fmt: skip


CHAR = 6.6  # a label character's width at the charts' 11 px, near enough
LABEL_MOST = 60


LANES = ("session", "checkpoint", "decision", "revert")
LANE_NAMES = {"session": "Sessions", "checkpoint": "Checkpoints", "decision": "Decisions",
              "revert": "Reverted"}  # fmt: skip


def timeline(events: list[dict[str, Any]], since: str, until: str, *,
             lane: int = 30) -> dict[str, Any]:  # fmt: skip
    """A project's events on one time axis, a lane per kind: a session a bar from its
    start to its end (to the window's end while open), anything else a mark at its time;
    day ticks under them: {width, height, lanes: [{y, name}], marks: [{x, y, w, kind,
    label, at, id}], ticks: [{x, label}]}."""
    import time

    from waymark.base.clock import epoch

    left, right = 110.0, WIDTH - 10.0
    start, end = epoch(since), epoch(until)
    span = max(1.0, end - start)

    def x(stamp: str | None) -> float:
        at = epoch(stamp) if stamp else end
        return left + (right - left) * min(1.0, max(0.0, (at - start) / span))

    lanes = [{"y": 6 + i * lane, "name": LANE_NAMES[k]} for i, k in enumerate(LANES)]
    marks = []
    for e in events:
        y = 6 + LANES.index(e["kind"]) * lane
        x1 = x(e["at"])
        w = max(3.0, x(e["until"]) - x1) if e["kind"] == "session" else 0.0
        marks.append({"x": x1, "y": y, "w": w, "kind": e["kind"], "at": e["at"], "id": e["id"],
                      "label": e.get("what") or e["kind"]})  # fmt: skip
    if span <= 86400 * 1.01:  # a day: every three hours
        first, step, form = int(start), 3 * 3600, "%H:%M"
    else:  # midnights: every day, week or month
        step = 86400 * (1 if span <= 8 * 86400 else 7 if span <= 62 * 86400 else 30)
        first, form = (int(start) // 86400 + 1) * 86400, "%m-%d"
    ticks = [{"x": left + (right - left) * (t - start) / span,
              "label": time.strftime(form, time.gmtime(t))}
             for t in range(first, int(end) + 1, step)]  # fmt: skip
    bottom = 6 + len(LANES) * lane
    return {"width": WIDTH, "height": bottom + 18, "lanes": lanes, "marks": marks,
            "ticks": ticks, "bottom": bottom, "left": left, "bar": lane - 12}  # fmt: skip


def network(nodes: list[dict[str, Any]], edges: list[dict[str, str]], *,
            height: int | None = None, label: int = 24) -> dict[str, Any]:  # fmt: skip
    """A neighbourhood on rings: the first node in the middle, each step's nodes on a ring
    of its own, spread evenly (a node beside the one that reached it where it can be); a
    label beside each node, on the side facing out, cut to `label` characters (the whole
    text in its tooltip): {width, height, nodes: [{x, y, anchor, short, ...}], edges:
    [{x1, y1, x2, y2, kind}]}."""
    if height is None:  # a few nodes need little room
        height = 300 if len(nodes) <= 8 else 420 if len(nodes) <= 20 else 540
    cx, cy = WIDTH / 2, height / 2
    rings: dict[int, list[dict[str, Any]]] = {}
    for n in nodes:
        rings.setdefault(n["depth"], []).append(n)
    deepest = max(rings, default=0)
    rx, ry = (cx - 20) / max(1, deepest), (cy - 24) / max(1, deepest)  # rings are ellipses
    placed: dict[str, dict[str, Any]] = {}
    angle_of: dict[str, float] = {}
    for depth in sorted(rings):
        ring = rings[depth]
        if depth == 0:
            for n in ring:
                placed[n["id"]] = {**n, "x": cx, "y": cy, "anchor": "middle"}
                angle_of[n["id"]] = 0.0
            continue
        # near the node that reached it: order a ring by its parents' angles
        parent = {e["dst"]: e["src"] for e in edges} | {e["src"]: e["dst"] for e in edges}
        ring.sort(key=lambda n: (angle_of.get(parent.get(n["id"], ""), 0.0), n["id"]))
        offset = 0.3 * depth
        for i, n in enumerate(ring):
            a = offset + 2 * math.pi * i / len(ring)
            angle_of[n["id"]] = a
            x, y = cx + rx * depth * math.cos(a), cy + ry * depth * math.sin(a)
            placed[n["id"]] = {**n, "x": x, "y": y,
                               "anchor": "start" if math.cos(a) >= 0 else "end"}  # fmt: skip
    for n in placed.values():
        title = n["title"] or n["id"]
        n["short"] = title if len(title) <= label else title[: label - 1] + "…"
    drawn = [{"x1": placed[e["src"]]["x"], "y1": placed[e["src"]]["y"],
              "x2": placed[e["dst"]]["x"], "y2": placed[e["dst"]]["y"], "kind": e["kind"]}
             for e in edges if e["src"] in placed and e["dst"] in placed]  # fmt: skip
    pad = 6.5 * label + 14  # room for a label beside a node on the outer ring, either side
    return {"width": WIDTH, "height": height, "nodes": list(placed.values()), "edges": drawn,
            "pad": pad}  # fmt: skip
