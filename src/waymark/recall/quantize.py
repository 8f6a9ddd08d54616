"""An int8 copy of the embedding model, for queries.

On one core the full model spends ~9 ms on a 64-token query (p95), nearly all of it in fp32
matrix products. The same graph with int8 weights (per output channel) and activations
quantised on the fly takes ~5 ms on the integer kernels of a modern CPU, and its rows stay
within cosine ~0.99 of the full model's, so queries embedded with it search the vectors the
full model stored (development set: R@10 0.694 against 0.699). Documents keep the full model:
stored vectors are canonical.

The copy is built once per model file into the data home (about 2 s, with the `onnx`
package), checked against the full model on probe sentences, and run with onnxruntime and
tokenizers alone: a process that only embeds queries loads it in ~50 ms and never imports
fastembed (~0.4 s) or loads the full model (~0.2 s). The MCP server builds it in the
background; so does `waymark index`.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time

from waymark.base import clock
from waymark.errors import Int8Unavailable
from waymark.recall import embed
from waymark.recall.embed import (
    INT8_RECIPE,
    MODEL_FILE,
    QUERY_TOKENIZER,
    int8_built,
    int8_folder_for,
    int8_source,
    load_int8,
)

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

# How close the copy's rows must stay to the full model's over PROBES. all-MiniLM-L6-v2
# measures a mean of 0.993 and a worst of 0.972 (a one-word query: short ones stray most).
MIN_MEAN_COSINE = 0.98
MIN_WORST_COSINE = 0.95
SETTING = "recall.int8_queries"
SIDE_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")
PROBES = (
    "why does the login redirect loop after the session cookie expires",
    "decided to keep SQLite with WAL mode instead of moving to Postgres",
    "pytest fails on Windows because the temp path contains a space",
    "next: wire the retry budget into the payment webhook handler",
    "what did we verify about the migration rollback last week?",
    "Caroline went to the LGBTQ support group on 7 May 2023",
    "src/waymark/recall.py fusion weights",
    "refactor",
    "ok",
)

BUILD_TIMEOUT_S = 300
log = logging.getLogger("waymark.quantize")


def enabled(conn: Any) -> bool:
    """Whether queries should go through the copy: the `recall.int8_queries` setting."""
    from waymark import settings

    return bool(settings.get(conn, SETTING))


def build(full: embed.Embedder | None = None, spec: embed.Model | None = None) -> str:
    """Build (or find) the copy of the current model and return its folder; raise Int8Unavailable
    saying why when it cannot be built or strays from the full model (then the verdict is
    kept, and not built again for that file). `full` is the loaded full model, for the check
    (loaded here when not given)."""
    spec = full.spec if full is not None else spec or embed.ENGLISH
    source = int8_source(spec)
    if source is None:
        raise Int8Unavailable("no embedding model on disk to copy")
    final = int8_folder_for(source)
    if os.path.isfile(os.path.join(final, QUERY_TOKENIZER)):
        return final
    rejected = about(final + ".rejected")
    if rejected:
        raise Int8Unavailable(str(rejected.get("why", "the int8 copy was rejected")))
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise Int8Unavailable(f"cannot build the int8 query model: {exc}") from exc

    started = time.perf_counter()
    parent = os.path.dirname(final)
    os.makedirs(parent, mode=0o700, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".build-", dir=parent)
    try:
        _quantise(ort, quantize_dynamic, QuantType, source, work)
        for name in SIDE_FILES:
            side = os.path.join(os.path.dirname(source), name)
            if os.path.isfile(side):
                shutil.copyfile(side, os.path.join(work, name))
        real = os.path.realpath(source)
        full = full or embed.open_embedder(spec)
        with open(os.path.join(work, QUERY_TOKENIZER), "w", encoding="utf-8") as f:
            f.write(full.tokenizer_json())
        mean, worst = _agreement(full, work)
        if mean < MIN_MEAN_COSINE or worst < MIN_WORST_COSINE:
            why = (
                f"the int8 copy of {source} strays too far from the full model (probe cosine"
                f" mean {mean:.4f}, worst {worst:.4f}; wanted {MIN_MEAN_COSINE} and"
                f" {MIN_WORST_COSINE}); queries use the full model"
            )
            _write_about(final + ".rejected", {"recipe": INT8_RECIPE, "source": real, "why": why})
            raise Int8Unavailable(why)
        facts: dict[str, Any] = {
            "recipe": INT8_RECIPE,
            "source": real,
            "probe_cosine_mean": round(mean, 5),
            "probe_cosine_worst": round(worst, 5),
            "built_at": clock.now(),
            "build_seconds": round(time.perf_counter() - started, 2),
        }
        _write_about(work, facts)
        try:
            os.replace(work, final)  # atomic; another process may have won the race
        except OSError:
            if not os.path.isfile(os.path.join(final, QUERY_TOKENIZER)):
                raise
        else:
            _remove_stale(parent, keep=final, source=real)
        log.info("built the int8 query model in %.1f s: %s", facts["build_seconds"], final)
        return final
    except Int8Unavailable:
        raise
    except Exception as exc:  # onnx, onnxruntime and the file system raise many kinds
        raise Int8Unavailable(f"cannot build the int8 query model from {source}: {exc}") from exc
    finally:
        shutil.rmtree(work, ignore_errors=True)


def attach(embedder: embed.Embedder, *, apart: bool = False) -> str:
    """Build the copy if needed and send `embedder`'s queries through it; its folder. Raises
    Int8Unavailable, saying why, when there is none to be had. `apart`: a long-lived process
    builds it in a child process (`build_apart`)."""
    folder = build_apart(embedder.spec) if apart else build(embedder)
    if embedder.query_precision != "int8":
        embedder.attach_queries(load_int8(folder))
    return folder


def _quantise(ort: Any, quantize_dynamic: Any, kinds: Any, source: str, work: str) -> None:
    """The int8 graph of `source` into `work`. Constant folding first turns weights stored
    as int8 + scale back into plain fp32 initializers, which the quantiser needs; BASIC keeps
    the graph to standard ops."""
    folded = os.path.join(work, "folded.onnx")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # background work beside hooks: one core at most
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = folded
    ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    with _quiet_root_logger():  # the quantiser logs advice to the root logger
        quantize_dynamic(
            folded,
            os.path.join(work, MODEL_FILE),
            weight_type=kinds.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
    os.remove(folded)


def build_apart(spec: embed.Model) -> str:
    """`build` in a process of its own, at a lower priority: a server's answers never wait
    for the quantiser, which holds the interpreter's lock for most of its 2 s (a new data
    home's first team recalls took 150-420 ms instead of 50 while it ran in a thread). The
    copy's folder, or Int8Unavailable with the child's reason."""
    import subprocess
    import sys

    found = int8_built(spec)
    if found is not None:
        return found
    try:
        done = subprocess.run(
            [sys.executable, "-m", "waymark.recall.quantize", spec.choice],
            capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Int8Unavailable(f"cannot build the int8 query model: {exc}") from exc
    said = done.stdout.strip().splitlines()
    if done.returncode != 0 or not said:
        why = done.stderr.strip().splitlines()
        raise Int8Unavailable(why[-1] if why else f"the int8 build exited {done.returncode}")
    return said[-1]


def note(enabled: bool, spec: embed.Model = embed.ENGLISH) -> str:
    """How queries are embedded here, in one sentence for `waymark status`."""
    if not enabled:
        return "full model (recall.int8_queries is off)"
    folder = int8_built(spec)
    if folder is not None:
        return f"int8 copy at {folder}"
    source = int8_source(spec)
    rejected = about(int8_folder_for(source) + ".rejected") if source else {}
    if rejected.get("why"):
        return str(rejected["why"])
    return (
        "full model until the int8 copy is built (once, by `waymark index` or the MCP server;"
        " it needs the onnx package)"
    )


def about(folder: str) -> dict[str, Any]:
    try:
        with open(os.path.join(folder, "about.json"), encoding="utf-8") as f:
            found = json.load(f)
        return found if isinstance(found, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_about(folder: str, facts: dict[str, Any]) -> None:
    os.makedirs(folder, mode=0o700, exist_ok=True)
    with open(os.path.join(folder, "about.json"), "w", encoding="utf-8") as f:
        json.dump(facts, f, indent=2)


def _agreement(full: embed.Embedder, folder: str) -> tuple[float, float]:
    """The mean and the lowest cosine between the full model's rows and the copy's, over
    PROBES."""
    copy = embed.Embedder(load_int8(folder), full.spec)
    reference = full.embed(list(PROBES), max_tokens=embed.QUERY_MAX_TOKENS)
    candidate = copy.embed(list(PROBES), max_tokens=embed.QUERY_MAX_TOKENS)
    cosines = (reference * candidate).sum(axis=1)
    return float(cosines.mean()), float(cosines.min())


def _remove_stale(parent: str, *, keep: str, source: str) -> None:
    """Drop earlier copies of the same source file (a replaced model, an older recipe) and
    builds a killed process left behind."""
    for name in os.listdir(parent):
        path = os.path.join(parent, name)
        if path == keep:
            continue
        if name.startswith(".build-"):
            try:
                abandoned = time.time() - os.stat(path).st_mtime > 3600
            except OSError:
                abandoned = False
            if abandoned:
                shutil.rmtree(path, ignore_errors=True)
        elif about(path).get("source") == source:
            shutil.rmtree(path, ignore_errors=True)


class _quiet_root_logger:
    """Hold back records below ERROR that go straight to the root logger, for a moment."""

    def __enter__(self) -> None:
        logging.getLogger().addFilter(self._filter)

    def __exit__(self, *exc: object) -> None:
        logging.getLogger().removeFilter(self._filter)

    @staticmethod
    def _filter(record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


def _main(argv: list[str]) -> int:
    """`python -m waymark.recall.quantize CHOICE`: build the copy of that model (`build_apart`
    runs it); prints its folder, or the reason there is none on stderr (exit 3)."""
    import sys

    from waymark.base.launch import behind_the_hooks

    behind_the_hooks()
    spec = embed.MODELS.get(argv[0]) if argv else None
    if spec is None:
        print(f"usage: python -m waymark.recall.quantize {{{','.join(embed.MODELS)}}}",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        print(build(spec=spec))
    except Int8Unavailable as exc:
        print(exc.message, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(_main(sys.argv[1:]))
