"""The embedding model: optional, loaded lazily, never fetched unless the caller allows it.

Nothing heavy is imported here at module import: fastembed (with onnxruntime and numpy) costs
about half a second, so it is imported inside `open_embedder`, and `semantic_available` only
looks for the packages and the model files. Query embedding belongs in a warm process (the CLI
or the MCP server), never in a per-prompt hook.
"""

from __future__ import annotations

import os

from waymark import home
from waymark.base.text import mend
from waymark.errors import Int8Unavailable, ModelUnavailable

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    import threading
    from collections.abc import Callable
    from typing import Any


class Model:
    """An embedding model Waymark can run: `choice` is its value of the `recall.model`
    setting, `id` the name each of its vectors is stored under (`vectors.model`: vectors of
    two models are never compared), `name` fastembed's, `files` what a model folder holds;
    `max_tokens` what the model was trained to read (longer texts are cut there), `hub`
    fastembed 0.9's cache folder for it, `legacy` an older fastembed's ("" when none).

    A plain class: a dataclass (~5 ms) or a namedtuple (~4 ms, its `eval`) would cost
    `waymark status` that much of its whole process."""

    __slots__ = ("choice", "name", "dim", "max_tokens", "model_file", "hub", "legacy", "size")

    def __init__(
        self, choice: str, name: str, dim: int, max_tokens: int, model_file: str, hub: str,
        legacy: str, size: str,
    ) -> None:  # fmt: skip
        self.choice, self.name, self.dim, self.max_tokens = choice, name, dim, max_tokens
        self.model_file, self.hub, self.legacy, self.size = model_file, hub, legacy, size

    def _key(self) -> tuple:
        return tuple(getattr(self, field) for field in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Model({self.choice!r}, {self.name!r})"

    @property
    def id(self) -> str:
        return self.name.rsplit("/", 1)[-1]

    @property
    def files(self) -> tuple[str, ...]:
        return (self.model_file, "tokenizer.json", "tokenizer_config.json")


ENGLISH = Model(
    "english", "sentence-transformers/all-MiniLM-L6-v2", 384,
    256,  # sentence-transformers truncates this model at 256; fastembed would use 512
    "model.onnx", "models--Qdrant--all-MiniLM-L6-v2-onnx", "fast-all-MiniLM-L6-v2", "about 90 MB",
)  # fmt: skip
# Opt in (`waymark config recall.model multilingual`): about 50 languages, and a query in
# one finds a memory written in another. fastembed ships it already quantised to int8.
MULTILINGUAL = Model(
    "multilingual", "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2", 384, 128,
    "model_optimized.onnx", "models--Qdrant--paraphrase-multilingual-MiniLM-L12-v2-onnx-Q", "",
    "about 220 MB",
)  # fmt: skip
MODELS = {m.choice: m for m in (ENGLISH, MULTILINGUAL)}
SETTING = "recall.model"

# A query is embedded up to here: its cost grows with its length (30 tokens ~9 ms, 86 ~27 ms
# on one core), what it asks is in its opening, and its lexical tiers still read all of it.
QUERY_MAX_TOKENS = 64
BATCH_SIZE = 16  # larger batches cost memory (batch 256 peaks near 1.2 GB RSS), not speed
THREADS = 1  # 2 measured worse beside recall on 2 cores (overlapped p95 25 vs 16 ms)
ENV_MODEL_DIR = "WAYMARK_EMBED_MODEL_DIR"
PACKAGES = ("fastembed", "onnxruntime", "numpy")


def chosen(conn: Any) -> Model:
    """The model this store's vectors are made with: the `recall.model` setting."""
    from waymark import settings

    return MODELS[str(settings.get(conn, SETTING))]


MODEL_DIR_FILE = "model-dir"  # in the data folder: the folder `waymark index --model-dir` set


def model_dir() -> str | None:
    """The folder holding model.onnx and the tokenizer: WAYMARK_EMBED_MODEL_DIR, else the one
    `waymark index --model-dir` recorded for every later process (hooks, server, CLI)."""
    value = os.environ.get(ENV_MODEL_DIR, "").strip() or _recorded_dir()
    return os.path.abspath(os.path.expanduser(value)) if value else None


def _recorded_dir() -> str:
    try:
        with open(os.path.join(home.data_home(), MODEL_DIR_FILE), encoding="utf-8") as f:
            return f.read().strip()
    except (OSError, ValueError):
        return ""


def _dir_source() -> str:
    """How the model folder was named, for messages."""
    if os.environ.get(ENV_MODEL_DIR, "").strip():
        return ENV_MODEL_DIR
    return "the folder `waymark index --model-dir` recorded"


def record_model_dir(folder: str, spec: Model = ENGLISH) -> str | None:
    """Record `folder` as the model folder of every later process (after checking that it
    holds `spec`'s files), or forget the recorded one with "" (back to the download cache).
    Returns the absolute folder recorded, or None when forgotten."""
    from waymark.base.files import remove_quietly, write_atomic
    from waymark.errors import InvalidArgument

    path = os.path.join(home.ensure_home(), MODEL_DIR_FILE)
    if not folder.strip():
        remove_quietly(path)
        return None
    full = os.path.abspath(os.path.expanduser(folder))
    if not os.path.isdir(full):
        raise InvalidArgument(f"--model-dir {full} is not a folder", path=full)
    lacking = [f for f in spec.files if not os.path.isfile(os.path.join(full, f))]
    if lacking:
        raise InvalidArgument(
            f"--model-dir {full} lacks {', '.join(lacking)} (a model folder holds "
            f"{', '.join(spec.files)}: {spec.name} as ONNX)",
            path=full,
            lacking=lacking,
        )
    write_atomic(path, (full + "\n").encode("utf-8"))
    return full


def cache_dir() -> str:
    """fastembed's download cache, inside the Waymark data home (not created here)."""
    return os.path.join(home.data_home(), "models")


def semantic_available(spec: Model = ENGLISH) -> tuple[bool, str]:
    """Whether `spec` can be loaded without the network, and a sentence saying which or why.

    Cheap: looks for packages and files, imports nothing.
    """
    absent = [name for name in PACKAGES if not _installed(name)]
    if absent:
        return False, (
            f"{', '.join(absent)} not installed; install waymark-agent-memory[semantic] for semantic recall"
        )
    folder = model_dir()
    if folder is not None:
        lacking = [f for f in spec.files if not os.path.isfile(os.path.join(folder, f))]
        if lacking:
            return False, (
                f"{_dir_source()} ({folder}) lacks {', '.join(lacking)}; point it at a folder "
                f"with {spec.name} as ONNX, or unset it to download the model"
            )
        return True, f"{spec.name} from {folder}"
    cached = cached_model(spec)
    if cached is None:
        return False, (
            f"{spec.name} is not downloaded yet; `waymark index` fetches it ({spec.size}) "
            f"into {cache_dir()}"
        )
    return True, f"{spec.name} from {os.path.dirname(cached)}"


def _installed(package: str) -> bool:
    """Whether a top-level package can be imported, without importing it: what
    `importlib.util.find_spec` asks, of the import system's own finders (importing
    `importlib` would cost `waymark status` ~1 ms, `importlib.util` ~2 ms more)."""
    import sys

    if package in sys.modules:
        return True
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is not None and find(package, None) is not None:
            return True
    return False


def cached_model(spec: Model = ENGLISH) -> str | None:
    snapshots = os.path.join(cache_dir(), spec.hub, "snapshots")
    try:
        revisions = sorted(os.listdir(snapshots), reverse=True)
    except OSError:
        revisions = []
    candidates = [os.path.join(snapshots, r, spec.model_file) for r in revisions]
    if spec.legacy:
        candidates.append(os.path.join(cache_dir(), spec.legacy, spec.model_file))
    return next((path for path in candidates if os.path.isfile(path)), None)


class Embedder:
    """A model: `embed` turns documents into L2-normalised float32 rows; `embed_queries` turns
    queries into rows through the int8 copy of the model when one is attached (about twice as
    fast, see `quantize`), else through the full model.

    `backend` is the loaded full model, or None with `load_full` loading it on first use (a
    process that only embeds queries never pays for it)."""

    def __init__(
        self,
        backend: Any,
        spec: Model = ENGLISH,
        *,
        load_full: Callable[[], Any] | None = None,
        queries: Any = None,
    ) -> None:
        self._backend = backend
        self._load_full = load_full
        self._queries = queries
        self.spec = spec
        self.model = spec.id  # what its vectors are stored and searched under
        self.dim = spec.dim
        # One inference at a time per model (one thread each), but a query through the copy
        # never waits behind a batch of documents: the server indexes while hooks ask.
        import threading  # here: `waymark status` reads this module and embeds nothing

        self._lock = threading.Lock()
        self._query_lock = threading.Lock()
        self._loading = threading.Lock()

    @property
    def query_precision(self) -> str:
        """What queries are embedded with: "int8" (the copy) or "float32" (the full model)."""
        return "int8" if self._queries is not None else "float32"

    def tokenizer_json(self) -> str:
        """The full model's tokenizer as it is set up to embed (truncation, padding, special
        tokens), serialised: what an int8 copy run without fastembed needs."""
        backend = self._full()
        with self._lock:
            tokenizer = _tokenizer(backend)
            if tokenizer is None:
                raise ModelUnavailable("this model has no tokenizer to copy")
            return str(tokenizer.to_str())

    def attach_queries(self, backend: Any) -> None:
        """Embed queries with `backend` (the int8 copy) from now on."""
        self._queries = backend

    def embed(self, texts: list[str], max_tokens: int | None = None) -> Any:
        """An (n, dim) float32 numpy array, one unit-length row per text, by the full model;
        each text cut at `max_tokens` (default: the model's own): the cost grows with the length."""
        return self._run(self._full() if texts else None, texts, max_tokens, self._lock)

    def embed_queries(self, texts: list[str], max_tokens: int = QUERY_MAX_TOKENS) -> Any:
        """Like `embed`, for queries: by the int8 copy when attached, each cut at `max_tokens`."""
        if self._queries is not None:
            return self._run(self._queries, texts, max_tokens, self._query_lock)
        return self._run(self._full() if texts else None, texts, max_tokens, self._lock)

    def embed_query(self, text: str, max_tokens: int = QUERY_MAX_TOKENS) -> Any:
        """One unit-length float32 vector of length dim, for a query's first `max_tokens`."""
        return self.embed_queries([text], max_tokens=max_tokens)[0]

    def _full(self) -> Any:
        if self._backend is None:
            with self._loading:
                if self._backend is None:
                    if self._load_full is None:
                        raise ModelUnavailable("no full embedding model to load")
                    self._backend = self._load_full()
        return self._backend

    def _run(
        self, backend: Any, texts: list[str], max_tokens: int | None, lock: threading.Lock
    ) -> Any:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        texts = [mend(t) for t in texts]  # the tokenizer refuses lone surrogates
        # Shortest first: a batch is padded to its longest text, and padding costs as much as
        # text (a batch of 16 mixed turns ran at 54 texts/s, sorted at 108).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with lock:
            tokenizer = _tokenizer(backend) if max_tokens else None
            longest = self.spec.max_tokens
            if tokenizer is not None:
                tokenizer.enable_truncation(max_length=min(int(max_tokens or 0), longest))
            try:
                rows = list(backend.embed([texts[i] for i in order], batch_size=BATCH_SIZE))
            finally:
                if tokenizer is not None:
                    tokenizer.enable_truncation(max_length=longest)
        sorted_rows = np.vstack(rows).astype(np.float32, copy=False)
        if sorted_rows.shape != (len(texts), self.dim):
            raise ModelUnavailable(
                f"the model returned shape {sorted_rows.shape}, expected ({len(texts)}, {self.dim})"
            )
        matrix = np.empty_like(sorted_rows)
        matrix[order] = sorted_rows
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1, norms)


def _tokenizer(backend: Any) -> Any:
    """The backend's `tokenizers.Tokenizer` (fastembed keeps it on .model), or None."""
    found = getattr(backend, "tokenizer", None)
    return (
        found if found is not None else getattr(getattr(backend, "model", None), "tokenizer", None)
    )


class OnnxQueries:
    """A model run with onnxruntime and tokenizers alone, as fastembed runs this model (mean
    of the last hidden state over the attention mask; `Embedder` normalises), without
    importing fastembed (~0.4 s against ~0.1 s): for the int8 copy, whose folder holds the
    tokenizer exactly as fastembed configured it (`embed.QUERY_TOKENIZER`)."""

    def __init__(self, model_file: str, tokenizer_file: str) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(tokenizer_file)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = THREADS
        options.inter_op_num_threads = THREADS
        self.session = ort.InferenceSession(model_file, options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: list[str], batch_size: int = BATCH_SIZE) -> Any:
        import numpy as np

        for start in range(0, len(texts), batch_size):
            encoded = self.tokenizer.encode_batch(texts[start : start + batch_size])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.array([e.type_ids for e in encoded], dtype=np.int64)
            hidden = self.session.run(None, feed)[0]
            weights = mask[..., None].astype(hidden.dtype)
            yield from (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


_loaded: dict[tuple[str, str, str, bool, int], Embedder] = {}
_last_reason = ""


def open_embedder(
    spec: Model = ENGLISH,
    allow_download: bool = False,
    *,
    int8_queries: bool = False,
    threads: int = THREADS,
) -> Embedder:
    """Load `spec` (once per process and location) or raise ModelUnavailable.

    With `allow_download=False` the network is never touched: a model folder from
    WAYMARK_EMBED_MODEL_DIR or an already cached download is required. With `int8_queries`,
    queries go through the int8 copy of the model when one is built (`quantize`), and the full
    model loads only when documents are embedded. `threads` is the full model's: more than
    one only where nothing else runs beside it (`waymark index`).
    """
    ok, reason = semantic_available(spec)
    if not ok and not (allow_download and _only_missing_download()):
        raise ModelUnavailable(reason)
    folder = model_dir()
    where = ("dir", folder) if folder else ("cache", cache_dir())
    key = (spec.choice, *where, int8_queries, threads)
    if key not in _loaded:
        local_only = folder is not None or ok

        def load() -> Any:
            return load_backend(folder, local_only=local_only, threads=threads, spec=spec)

        copy = _int8_copy(spec) if int8_queries else None
        _loaded[key] = Embedder(None if copy else load(), spec, load_full=load, queries=copy)
    return _loaded[key]


def _int8_copy(spec: Model) -> Any:
    """The int8 copy's backend when it is built and loads, else None (queries go full)."""
    folder = int8_built(spec)
    if folder is None:
        return None
    try:
        return load_int8(folder)
    except Int8Unavailable:
        return None


# The int8 copy of the model for queries, as `quantize` builds it into the data home.
INT8_RECIPE = "int8-dynamic-matmul-per-channel-v2"  # change it to rebuild every copy
MODEL_FILE = "model.onnx"
QUERY_TOKENIZER = "query-tokenizer.json"  # the full model's tokenizer as fastembed set it up


def int8_source(spec: Model = ENGLISH) -> str | None:
    """The full model's file: in WAYMARK_EMBED_MODEL_DIR, else fastembed's cached download."""
    folder = model_dir()
    if folder is not None:
        path = os.path.join(folder, spec.model_file)
        return path if os.path.isfile(path) else None
    return cached_model(spec)


def int8_folder_for(source: str) -> str:
    """Where the copy of `source` lives: keyed by the recipe and the file's path, size and
    modification time (cheap to compute, unlike a hash of 90 MB; a replaced file gets a new
    copy)."""
    import hashlib  # OpenSSL: ~3 ms of `waymark status`, which imports this module

    real = os.path.realpath(source)
    st = os.stat(real)
    key = hashlib.sha256(
        f"{INT8_RECIPE}\0{real}\0{st.st_size}\0{st.st_mtime_ns}".encode()
    ).hexdigest()
    return os.path.join(cache_dir(), "int8", key[:16])


def int8_built(spec: Model = ENGLISH) -> str | None:
    """The folder of a ready copy of `spec`'s model file, or None."""
    source = int8_source(spec)
    if source is None:
        return None
    try:
        folder = int8_folder_for(source)
    except OSError:
        return None
    return folder if os.path.isfile(os.path.join(folder, QUERY_TOKENIZER)) else None


def load_int8(folder: str) -> OnnxQueries:
    """The copy in `folder`, ready to embed queries (onnxruntime alone: no fastembed)."""
    try:
        return OnnxQueries(os.path.join(folder, MODEL_FILE), os.path.join(folder, QUERY_TOKENIZER))
    except Exception as exc:  # onnxruntime and tokenizers raise their own kinds
        raise Int8Unavailable(f"cannot load the int8 query model from {folder}: {exc}") from exc


def load_embedder(
    spec: Model = ENGLISH, allow_download: bool = False, *, int8_queries: bool = False
) -> Embedder | None:
    """Like `open_embedder`, but None when unavailable; `last_reason()` then says why."""
    global _last_reason
    try:
        return open_embedder(spec, allow_download, int8_queries=int8_queries)
    except ModelUnavailable as exc:
        _last_reason = exc.message
        return None


def last_reason() -> str:
    """Why the last `load_embedder` returned None ("" if it never did)."""
    return _last_reason


def _only_missing_download() -> bool:
    """True when the packages are there and only the default model's download is missing."""
    return model_dir() is None and all(_installed(p) for p in PACKAGES)


PROBE_TIMEOUT_S = 3.0


def _reachable_or_fail(spec: Model) -> None:
    """Raise ModelUnavailable, with what to do, when the model's host cannot be reached."""
    import socket
    from urllib.parse import urlsplit

    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    endpoint = proxy or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    parts = urlsplit(endpoint if "//" in endpoint else f"//{endpoint}")
    host, port = (
        parts.hostname or "huggingface.co",
        parts.port or (80 if parts.scheme == "http" else 443),
    )
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S).close()
    except OSError as exc:
        raise ModelUnavailable(
            f"cannot reach {host}:{port} to fetch {spec.name} ({spec.size}): {exc}. This "
            f"machine looks offline: copy the model's files ({', '.join(spec.files)}) "
            "into a folder and run `waymark index --model-dir FOLDER` (every later process "
            f"uses it; {ENV_MODEL_DIR} does for one shell), or run `waymark index` again "
            "when online; recall stays lexical meanwhile"
        ) from None


def load_backend(
    folder: str | None, *, local_only: bool, threads: int = THREADS, spec: Model = ENGLISH
) -> Any:
    # An idle OpenBLAS pool can spin in a long-lived process; one thread is plenty here.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        from fastembed import TextEmbedding
    except ImportError as exc:
        raise ModelUnavailable(f"cannot import fastembed: {exc}") from exc
    home.ensure_home()
    if not local_only:
        _reachable_or_fail(spec)  # offline: say so in seconds, not after 40 s of retries
    options: dict[str, Any] = {"local_files_only": local_only}
    if folder is not None:
        options["specific_model_path"] = folder
    try:
        backend: Any = TextEmbedding(
            model_name=spec.name, cache_dir=cache_dir(), threads=threads, **options
        )
        _tokenizer(backend).enable_truncation(max_length=spec.max_tokens)
    except Exception as exc:  # fastembed raises ValueError, OSError, onnxruntime errors...
        where = folder or cache_dir()
        raise ModelUnavailable(
            f"cannot load {spec.name} from {where}: {exc}"
            + ("" if local_only else "; check the network connection and retry")
        ) from exc
    return backend
