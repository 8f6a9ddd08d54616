"""`waymark index`: embed the memories that have no current vector."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from waymark import errors
from waymark.cli.admin import _progress_bar
from waymark.cli.common import Context, add_command, emit
from waymark.recall import embed, quantize, vectors

INDEX_THREADS = max(1, min(4, os.cpu_count() or 1))  # 2 threads: 1.8x the texts/s of 1


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    p = add_command(
        commands, "index", common, handler=cmd_index,
        help="embed memories for semantic recall (only new or changed text; resumable; "
        "fetches the model on first use)",
        example="waymark index --all-projects",
    )  # fmt: skip
    p.add_argument(
        "--all-projects", action="store_true",
        help="every project's memories, not only this project's and the global ones",
    )  # fmt: skip


def cmd_index(args: argparse.Namespace, ctx: Context) -> int:
    project = None if args.all_projects else ctx.project()
    # Nothing else runs in this process: every core (up to 4) embeds. Raises
    # ModelUnavailable (exit 1) when there is no model and it cannot be fetched.
    model = embed.open_embedder(allow_download=True, threads=INDEX_THREADS)
    bar: list[Any] = []  # created on the first call, when the count is known

    def progress(done: int, todo: int) -> None:
        if not bar:
            bar.append(_progress_bar(todo))
        bar[0](done)

    show = sys.stderr.isatty() and not ctx.as_json
    started = time.perf_counter()
    report = vectors.index_missing(
        ctx.conn, model, project.id if project else None, progress=progress if show else None
    )
    elapsed = time.perf_counter() - started
    queries = int8_queries(ctx, model)
    data = report | {
        "model": model.model,
        "project": project.to_dict() if project else None,
        "seconds": round(elapsed, 3),
        "queries": queries,
    }
    where = f"{project.name or project.root}" if project else "all projects"
    rate = f", {report['embedded'] / elapsed:,.0f}/s" if report["embedded"] and elapsed else ""
    emit(data, ctx.as_json,
         f"{where}: embedded {report['embedded']}, {report['skipped']} already current "
         f"({report['total']} active memories, model {model.model}{rate})\n"
         f"queries: {queries['note']}")  # fmt: skip
    return 0


def int8_queries(ctx: Context, model: embed.Embedder) -> dict[str, Any]:
    """Build the int8 query model once (quantize.py) unless recall.int8_queries is off. A
    failure leaves queries on the full model and is reported, not fatal: the index is done."""
    if not quantize.enabled(ctx.conn):
        return {"precision": "float32", "note": quantize.note(False)}
    if sys.stderr.isatty() and not ctx.as_json and not embed.int8_built():
        print("building the int8 query model (once per model file)...", file=sys.stderr)
    try:
        folder = quantize.attach(model)
    except errors.Int8Unavailable as exc:
        return {"precision": "float32", "note": f"full model: {exc.message}"}
    return {"precision": "int8", "note": f"int8 copy at {folder}", "folder": folder}
