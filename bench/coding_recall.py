"""Retrieval quality on coding memories the project ships: bench/codingset.

Two projects written by hand as a coding agent's memory would hold them (a Python data
service and a TypeScript notes app: decisions, incidents and their fixes linked by `solves`,
conventions, warnings, file- and directory-scoped notes, one superseded decision) with 100
questions judged by hand, each of a kind: `paraphrase` (other words than the memory's),
`linked` (a problem whose fix is a linked memory: both count), `path` (names a file or
folder), `entity` (names a tool, module or person), `keyword` (an error message), `date` (a
month). Each project also holds `--noise` synthetic memories (bench/corpus.py, another
domain's words) so that ranking has something to beat. Memories are written through the
library as a user's would be; queries run through `recall` as `waymark recall` runs them,
hybrid when a model is on this machine (WAYMARK_EMBED_MODEL_DIR), and lexical-only.

    python bench/coding_recall.py [--noise 2000] [--json OUT] [--misses] [--keep] [--prompts] [--packet]
                                  [--variant "fts=16,4,8,8 graph_weight=0.3" ...]

A variant sets BM25's column weights (`fts=title,content,tags,target`) and any of recall's
knobs (`recall/knobs.py` Settings) for one run over the same store; each is run hybrid and
lexical. Without one, the shipped settings.

Metrics as the shared scorer defines them (binary relevance, the top ten): R@k the share of a
question's relevant memories in the top k, MRR@10, nDCG@10; averaged over all questions and
per kind. The set was written by the team that tunes on it: a floor against regressions and
a place to judge what the development set cannot (titles, tags, targets, links), not a
neutral judge.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import sys
import tempfile
import time

import corpus

HERE = pathlib.Path(__file__).resolve().parent
SET = HERE / "codingset"
PROJECTS = ("tidepool", "quillpad")
# `--prompts`: each question as a request to an agent, in words common to every project (a
# prompt hook's budget and share limits act on such words; the question stays what is judged).
PROMPTS = (
    "{q}",
    "Before you change anything: {q}? I want to be sure we do not break the tests or the build.",
    "hey, quick one: {q}. then please update the code and run the test suite",
    "I'm picking up the next task in this repo. {q} Check the docs and the recent changes first.",
    "{q} Please look through the project, fix whatever is needed and add a test for it.",
)
METRICS = ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10")


def read_jsonl(path: pathlib.Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def materialise(root: pathlib.Path, memories: list[dict]) -> None:
    """The files and folders the memories are scoped to, so each target is a real path."""
    for m in memories:
        target = m.get("target")
        if not target:
            continue
        path = root / target.rstrip("/")
        if target.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()


def load_project(conn, project, memories: list[dict], noise: int, seed: int) -> dict[str, str]:
    """Write the noise, then the set's memories oldest first (a `supersedes` replaces its
    older decision), then their links; {key: memory id}."""
    from waymark.memories import links, store
    from waymark.memories.draft import make_draft

    if noise:
        records = corpus.make_corpus(noise, seed).records
        corpus.load(conn, project, [{**r, "scope": "project", "target": None} for r in records])
    ids: dict[str, str] = {}
    for m in sorted(memories, key=lambda m: (m["timestamp"], m["key"])):
        target = m.get("target")
        draft = make_draft(
            project,
            type=m["type"],
            content=m["content"],
            title=m["title"],
            scope=("directory" if target.endswith("/") else "file") if target else "project",
            target=target.rstrip("/") if target else None,
            tags=m["tags"],
            event_time=m["timestamp"],
            key=m["key"],
        )
        old = m.get("supersedes")
        saved = (
            store.supersede(conn, project, ids[old], draft)
            if old
            else store.remember(conn, project, draft)
        )
        ids[m["key"]] = saved.memory.id
    for m in memories:
        for kind, other in m.get("links", []):
            links.relate(conn, project, ids[m["key"]], ids[other], kind)
    return ids


PACKET_METRICS = ("answered", "found", "precision", "shown", "noise", "empty")


CANDIDATES: dict[str, tuple[list[str], list[str]]] = {}  # prompt -> (ranked keys, kept keys)


def packet_keys(conn, project, prompt: str, *, hybrid: bool) -> list[str]:
    """The keys of the memories the prompt packet shows for `prompt` in a new session (made
    as the warm MCP server makes it, with the model when `hybrid`; nothing recorded, so no
    question changes another's answer). The ranked candidates its relevance floor chose
    from, and those it kept, go to CANDIDATES (`ceiling`)."""
    import uuid

    from waymark.memories import store
    from waymark.packets import prompt as packets
    from waymark.recall import embed, floor, quantize, semantic

    chose = floor.relevant_hits

    def noted(hits, **kw):  # type: ignore[no-untyped-def]
        kept = chose(hits, **kw)
        CANDIDATES[prompt] = ([h.memory.key or h.memory.id for h in hits],
                              [h.memory.key or h.memory.id for h in kept])  # fmt: skip
        return kept

    floor.relevant_hits = noted

    neighbours = None
    if hybrid:
        model = embed.load_embedder(spec=embed.chosen(conn), int8_queries=quantize.enabled(conn))
        near = semantic.overlapped(conn, project.id, prompt, model,
                                   packets.PROMPT_SEMANTIC_TOKENS)  # fmt: skip
        neighbours = lambda: [near()]  # noqa: E731
    CANDIDATES.pop(prompt, None)
    try:
        text = packets.for_prompt(conn, project, str(uuid.uuid4()), "claude-code", prompt,
                                  neighbours, record=False) or ""  # fmt: skip
    finally:
        floor.relevant_hits = chose
    ids = [line.split(" · id ", 1)[1].split("]", 1)[0] for line in text.splitlines()
           if line.startswith("- [") and " · id " in line]  # fmt: skip
    return [store.get(conn, i).key or i for i in ids]


def packet_score(queries: list[dict], shown: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Per kind: `answered` the share of questions shown a relevant memory, `found` the share
    of relevant memories shown, `precision` the share of what was shown that is relevant
    (over packets that showed anything), `shown` and `noise` (synthetic ones) a packet's
    memories on average, `empty` the share of questions shown nothing."""
    groups: dict[str, list[dict[str, float]]] = {"ALL": []}
    for q in queries:
        keys, gold = shown.get(q["qid"], []), set(q["relevant"])
        hit = len(gold & set(keys))
        row = {"answered": float(hit > 0), "found": hit / len(gold), "shown": float(len(keys)),
               "noise": float(sum(k.startswith("bench-") for k in keys)),
               "empty": float(not keys), "precision": hit / len(keys) if keys else -1.0}  # fmt: skip
        groups["ALL"].append(row)
        groups.setdefault(q["kind"], []).append(row)
    out = {}
    for g, rows in groups.items():
        shown_any = [r["precision"] for r in rows if r["precision"] >= 0]
        means = {k: sum(r[k] for r in rows) / len(rows) for k in PACKET_METRICS}
        means["precision"] = sum(shown_any) / len(shown_any) if shown_any else 0.0
        out[g] = {"n": len(rows), **means}
    return out


def ceiling(queries: list[dict], shown: dict[str, list[str]]) -> dict[str, float]:
    """What a perfect cut of the same candidates would show: per question, of the other
    sections' memories plus each prefix of the ranked candidates, the one that finds the most
    relevant memories, then the most precisely (it knows the answers: no floor can do
    better on this ranking). Its answered, found and precision, as `packet_score` counts."""
    answered = found = precision = counted = 0.0
    for q in queries:
        gold, keys = set(q["relevant"]), shown.get(q["qid"], [])
        ranked, kept = CANDIDATES.get(q["query"], ([], []))
        others = [k for k in keys if k not in kept]
        best = None
        for n in range(len(ranked) + 1):
            show = others + [k for k in ranked[:n] if k not in others]
            if show:
                hit = len(gold & set(show))
                best = max(best or (False, 0.0, 0.0), (hit > 0, hit / len(gold), hit / len(show)))
        if best is not None:
            answered, found = answered + best[0], found + best[1]
            precision, counted = precision + best[2], counted + 1
    n = len(queries)
    return {"answered": answered / n, "found": found / n,
            "precision": precision / counted if counted else 0.0}  # fmt: skip


def per_query(ranked: list[str], relevant: list[str]) -> dict[str, float]:
    top = ranked[:10]
    gold = set(relevant)
    ranks = [i for i, key in enumerate(top) if key in gold]
    out = {f"R@{k}": sum(1 for i in ranks if i < k) / len(gold) for k in (1, 5, 10)}
    out["MRR@10"] = 1.0 / (ranks[0] + 1) if ranks else 0.0
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
    out["nDCG@10"] = sum(1 / math.log2(i + 2) for i in ranks) / ideal
    return out


def averages(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: sum(r[k] for r in rows) / len(rows) for k in METRICS}


def score(queries: list[dict], ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """{"ALL" or a kind: {metric: mean}, with "n"}."""
    groups: dict[str, list[dict[str, float]]] = {"ALL": []}
    for q in queries:
        m = per_query(ranked.get(q["qid"], []), q["relevant"])
        groups["ALL"].append(m)
        groups.setdefault(q["kind"], []).append(m)
    return {g: {"n": len(rows), **averages(rows)} for g, rows in groups.items()}


def run(args: argparse.Namespace) -> dict[str, dict[str, dict[str, float]]]:
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="waymark-codingset-"))
    os.environ["WAYMARK_HOME"] = str(tmp / "home")
    from waymark.projects.resolve import resolve
    from waymark.recall import ranked, semantic
    from waymark.storage import connection as db

    conn = db.connect()
    queries = read_jsonl(SET / "queries.jsonl")
    if args.prompts:
        for n, q in enumerate(queries):
            q["query"] = PROMPTS[n % len(PROMPTS)].format(q=q["query"])
    projects = {}
    started = time.perf_counter()
    for n, name in enumerate(PROJECTS):
        memories = read_jsonl(SET / f"{name}.jsonl")
        root = tmp / name
        materialise(root, memories)
        projects[name] = resolve(conn, str(root))
        load_project(conn, projects[name], memories, args.noise, seed=n)
    print(f"loaded {len(PROJECTS)} projects ({args.noise:,} noise memories each) in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    hybrid = bool(os.environ.get("WAYMARK_EMBED_MODEL_DIR"))
    if hybrid:
        import subprocess

        started = time.perf_counter()
        for name in PROJECTS:
            subprocess.run([sys.executable, "-m", "waymark", "index", "--project",
                            str(tmp / name)], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        print(f"index: {time.perf_counter() - started:.1f} s")
    else:
        print("index: skipped (set WAYMARK_EMBED_MODEL_DIR for hybrid recall)")
    from waymark.packets import prompt as prompt_packets
    from waymark.recall import floor

    shipped, weights = ranked.settings_for(conn), ranked.FTS_WEIGHTS
    modules = {"floor": floor, "prompt": prompt_packets}
    constants = {
        (m, k): getattr(modules[m], k) for m in modules for k in dir(modules[m]) if k.isupper()
    }
    results = {}
    runs = [(packet, label, variant) for packet in ((False, True) if args.packet else (False,))
            for variant in args.variant or [""]
            for label in (("hybrid", "lexical") if hybrid else ("lexical",))]  # fmt: skip
    for packet, label, variant in runs:
        tuned, ranked.FTS_WEIGHTS = shipped, weights
        for (module, constant), value in constants.items():
            setattr(modules[module], constant, value)
        for setting in variant.split():
            name, _, value = setting.partition("=")
            module, _, constant = name.rpartition(".")
            if name == "fts":
                ranked.FTS_WEIGHTS = tuple(float(w) for w in value.split(","))
            elif module:  # floor.SEMANTIC_MIN=0.5, prompt.PROMPT_MAX_ROWS=10000
                setattr(modules[module], constant, type(constants[module, constant])(value))
            else:
                tuned = tuned._replace(**{name: type(getattr(shipped, name))(value)})
        label = f"{'packet ' if packet else ''}{label} {variant}".strip()
        found: dict[str, list[str]] = {}
        started = time.perf_counter()
        for name, project in projects.items():
            asked = [q for q in queries if q["project"] == name]
            if packet:
                for q in asked:
                    found[q["qid"]] = packet_keys(conn, project, q["query"],
                                                  hybrid="hybrid" in label)  # fmt: skip
                continue
            near = semantic.neighbours(conn, project, [q["query"] for q in asked],
                                       mode="local" if "hybrid" in label else "off")  # fmt: skip
            for i, q in enumerate(asked):
                hits = ranked.recall(conn, project, q["query"], limit=10,
                                     semantic=near[i] if near else None, settings=tuned)  # fmt: skip
                found[q["qid"]] = [h.memory.key or h.memory.id for h in hits]
        took = (time.perf_counter() - started) * 1000 / len(queries)
        if packet:
            results[label] = packet_score(queries, found)
            print(f"\n### {label} ({len(queries)} questions, {took:.1f} ms a question)\n")
            print("| kind | n | " + " | ".join(PACKET_METRICS) + " |")
            print("|---|---:|" + "---:|" * len(PACKET_METRICS))
        else:
            results[label] = score(queries, found)
            print(f"\n### {label} ({len(queries)} questions, {took:.1f} ms a question)\n")
            print("| kind | n | " + " | ".join(METRICS) + " |")
            print("|---|---:|" + "---:|" * len(METRICS))
        for kind, row in results[label].items():
            cells = " | ".join(f"{row[k]:.3f}" for k in row if k != "n")
            print(f"| {kind} | {row['n']} | {cells} |")
        if packet:
            top = ceiling(queries, found)
            results[label]["ceiling"] = top
            print(f"\nceiling (a perfect cut of the same candidates): answered "
                  f"{top['answered']:.3f}, found {top['found']:.3f}, precision "
                  f"{top['precision']:.3f}")  # fmt: skip
        if args.misses and packet:  # every question whose packet missed a relevant memory
            for q in queries:
                shown = found[q["qid"]]
                if not set(q["relevant"]) <= set(shown):
                    print(f"  {q['qid']} {q['kind']} {q['query']!r}: shown {shown}")
        elif args.misses:  # every question whose best answer is not first, and where it is
            for q in queries:
                top = found[q["qid"]][:10]
                if top[:1] and top[0] in q["relevant"]:
                    continue
                where = [top.index(k) + 1 if k in top else None for k in q["relevant"]]
                print(f"  {q['qid']} {q['kind']} {q['query']!r}: relevant at {where}, "
                      f"first {top[:3]}")  # fmt: skip
    conn.close()
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"kept {tmp}")
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--noise", type=int, default=2000, help="synthetic memories a project")
    parser.add_argument("--json", default="", help="also write the tables to this file")
    parser.add_argument(
        "--variant",
        action="append",
        help='"fts=16,4,8,8 NAME=VALUE ...": one more run with these settings',
    )
    parser.add_argument(
        "--misses", action="store_true", help="list questions whose first answer is not relevant"
    )
    parser.add_argument(
        "--prompts", action="store_true", help="ask each question inside a longer request"
    )
    parser.add_argument(
        "--packet", action="store_true", help="also score what the prompt packet shows"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    args = parser.parse_args()
    results = run(args)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
