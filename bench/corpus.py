"""Synthetic coding memories, prompts and queries for the benchmarks: deterministic per seed.

A made-up project (`Tree`: a package of domains with source, test, web, migration and config
files) and memories about it of every type, written the way agents write them: identifiers in
snake_case and CamelCase, file paths, libraries, error messages, commands, ticket numbers.
Vocabulary is drawn with Zipf weights, so a few files and names are hot and most are rare,
as in a real project's FTS postings. Also: the loaders (`load` through the records API,
`import_jsonl` through the importer) and `fill_vectors`.

    python bench/corpus.py 5      # print a few memories, prompts and queries
"""

from __future__ import annotations

import calendar
import itertools
import json
import os
import random
import re
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import apsw

from waymark.data import importer
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.projects.resolve import Project
from waymark.recall import embed, vectors
from waymark.storage import connection as db

ANCHOR = calendar.timegm((2026, 11, 1, 0, 0, 0))  # event times spread over two years before it
VECTOR_NOTE = (
    "vectors: deterministic bag-of-words projections (dim 384, current text_hash): each word"
    " a fixed random unit row, a text the normalised sum of its words' rows plus a little"
    " noise, so memories that share words are near, as with a real model; the scan costs what"
    " real vectors cost; query embedding uses the real model"
)
PACKAGE = "shopcore"


def _words(text: str) -> list[str]:
    return text.split()


DOMAINS = _words(
    "billing invoices payments auth sessions accounts search ingest export reports"
    " scheduler webhooks notifications inventory orders shipping catalog pricing tenants"
    " audit metrics storage cache queue sync email uploads permissions feature_flags"
    " analytics"
)
NOUNS = _words(
    "invoice line_item customer token session cursor batch record payload event job"
    " worker retry backoff schema migration index query snapshot manifest bucket blob"
    " chunk offset tenant user role policy webhook signature receipt refund currency"
    " ledger balance price discount coupon order cart sku shipment address report row"
    " column filter page limit timeout deadline lock lease connection pool client request"
    " response header cookie config setting flag metric counter histogram span trace"
    " message topic partition consumer producer cache_key ttl digest checksum archive"
    " template attachment thumbnail upload"
)
VERBS = _words(
    "parse validate load save fetch sync render build flush retry resolve normalize"
    " serialize deserialize encode decode compute apply merge split schedule dispatch"
    " publish consume refresh expire evict migrate reconcile export import upload download"
    " sign verify hash index search rank filter paginate throttle enqueue drain open close"
    " acquire release"
)
SUFFIXES = _words(
    "Parser Client Service Repository Manager Policy Handler Worker Cache Store"
    " Serializer Validator Builder Factory Scheduler Exporter Importer Resolver Adapter"
    " Config Error Middleware View Form Job"
)
MODULES = _words(
    "models service api tasks schemas repository client utils handlers views cli errors"
    " constants serializers signals admin permissions backends"
)
LIBS = _words(
    "sqlalchemy alembic pydantic fastapi celery redis httpx requests pytest hypothesis"
    " numpy pandas boto3 psycopg structlog sentry_sdk uvicorn gunicorn jinja2 click typer"
    " orjson msgpack tenacity stripe react vite webpack eslint typescript zod playwright"
    " jest vitest mypy ruff docker kubernetes terraform postgres sqlite elasticsearch"
    " kafka rabbitmq grpc protobuf opentelemetry prometheus"
)
TAGS = _words(
    "flaky-test perf security migration ci db api frontend infra oncall tech-debt release"
    " testing config logging dx"
)
ENVS = ("staging", "prod", "CI", "local dev", "the nightly job", "the canary")
FLAGS = ("--dry-run", "--since", "--tenant", "--force", "--limit", "--resume", "--verbose")
CONFIGS = _words(
    "pyproject.toml docker-compose.yml .github/workflows/ci.yml Makefile alembic.ini"
    " web/package.json web/vite.config.ts Dockerfile deploy/helm/values.yaml"
)
ERRORS = (
    "KeyError: '{noun}_id'",
    "TypeError: 'NoneType' object is not subscriptable",
    'sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint "{table}_pkey"',
    "psycopg.errors.DeadlockDetected: deadlock detected",
    "TimeoutError: {cls} did not respond within {num}s",
    "ConnectionResetError: [Errno 104] Connection reset by peer",
    "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379",
    "ValueError: invalid literal for int() with base 10: '{noun}'",
    "AttributeError: '{cls}' object has no attribute '{method}'",
    "ModuleNotFoundError: No module named '{lib}'",
    "AssertionError: assert {num} == {num2}",
    "RecursionError: maximum recursion depth exceeded while calling {ident}",
    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x{hex} in position {num}",
    "httpx.ReadTimeout: timed out after {num}s",
    "HTTP 429 Too Many Requests from the {domain} API",
    "pydantic.ValidationError: 1 validation error for {cls}",
    "alembic.util.exc.CommandError: Multiple head revisions are present",
    "OSError: [Errno 24] Too many open files",
    "celery.exceptions.SoftTimeLimitExceeded in {ident}",
    "TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'",
    "Uncaught TypeError: Cannot read properties of undefined (reading '{noun}')",
    "sqlite3.OperationalError: database is locked",
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling PutObject",
)
COMMANDS = (
    "pytest {test} -x -q",
    "pytest {test} -k {method}",
    "pytest -n 4 tests/{domain}",
    "alembic upgrade head",
    "alembic revision --autogenerate -m '{verb} {noun}'",
    "make lint",
    "ruff check src/shopcore/{domain}",
    "mypy src/shopcore",
    "npm run build",
    "pnpm vitest run {Domain}",
    "docker compose up -d redis postgres",
    "git bisect run pytest {test}",
    "python -m shopcore.{domain}.cli {verb} --tenant acme",
    "celery -A shopcore worker -Q {domain} -c 2",
    "kubectl rollout restart deploy/{domain}-worker",
    "psql -c 'EXPLAIN ANALYZE SELECT * FROM {table} WHERE {col} = 42'",
    "redis-cli --scan --pattern '{domain}:*'",
    "tox -e py311",
)
# "Title | content": a memory's title (used 60% of the time; else the first line is) and text.
TEMPLATES = {
    "decision": (
        "Use {lib} for {domain} {nouns} | Use {lib} for {domain} {nouns} instead of {lib2}:"
        " {lib2} could not handle {reason}. Decided in {ticket}.",
        "{domain}: {noun} state lives in {table} | We keep {noun} state in {table} rather than"
        " in {lib} because replays after a crash must be exact; {ident} reads it back.",
        "{cls} owns {domain} retries | {cls} owns retries for {domain}; callers must not wrap"
        " {method} in their own retry loop (double backoff caused {ticket}).",
        "{lib} {ver} for the {noun} cache | Chose {lib} {ver} over a home-grown {noun} cache:"
        " {num} ms p95 against {num2} ms.",
        "Money in minor units | All money amounts in {domain} are integer minor units; {ident}"
        " converts at the edge.",
        "Cursor pagination for {domain} | Pagination for {domain} endpoints is cursor-based"
        " ({col} + created_at); offsets were dropped after {ticket}.",
    ),
    "convention": (
        "Tests mirror the source tree | Test files mirror the source tree: {file} is tested in"
        " {test}.",
        "Naming {domain} tasks | Name {domain} Celery tasks `{domain}.{ident}`; never rename a"
        " task already queued.",
        "Type hints in {dir} | Every public function in {dir} gets type hints and a docstring;"
        " run `{cmd}` first.",
        "Where {const} lives | Constants such as {const} live in {file}, never inline in handlers.",
        "Structured logging | Log with structlog and bind `{col}` and `tenant_id`; no f-strings"
        " in log messages.",
        "Migration names | Migrations are named NNNN_{verb}_{noun}.py and must be reversible.",
        "Repositories return {cls} | Return {cls} objects from the repository layer, never raw"
        " rows; {ident} builds them.",
    ),
    "warning": (
        "{ident} is not idempotent | {ident} is not idempotent: calling it twice double-charges"
        " the {noun}. Guard with the {col} unique index.",
        "No {cls}.{method} in a transaction | Do not call {cls}.{method} inside a transaction;"
        " it opens its own connection and deadlocks ({err}).",
        "{file} is generated | {file} is generated by `{cmd}`; edit the template, not the file.",
        "{lib} client not thread-safe | The {lib} client in {file} is not thread-safe; create"
        " one per worker.",
        "Never log {noun} payloads | Never log the raw {noun} payload in {domain}: it holds"
        " customer emails.",
        "{const} limit | {const} must stay below {num}: {lib} silently truncates larger values.",
        "{test} is not parallel-safe | Tests in {test} share a {lib} container; running them"
        " with -n 4 causes {err}.",
    ),
    "lesson": (
        "Patch {cls}.{method}, not {lib} | Mocking {lib} at module level hid a real bug in"
        " {ident}; patch {cls}.{method} instead.",
        "Stale {noun} cache | When `{cmd}` fails with `{err}`, the cause was a stale {noun}"
        " cache: clear {domain}:* keys first.",
        "Flaky {test} | Bisecting flaky {test} showed the order dependence came from a global"
        " {cls}.",
        "Index on {table}({col}) | An index on {table}({col}) took {ident} from {num2} ms to"
        " {num} ms at p95.",
        "{domain} timeout was {lib}'s | The {domain} timeout was the {lib} default ({num}s), not"
        " ours; set it in {file}.",
    ),
    "solution": (
        "Fix {errname} in {ident} | Fix for `{err}` in {ident}: {fix}. See {pr}.",
        "Unstick {domain} workers | To unstick {domain} workers: `{cmd}`, then re-enqueue"
        " failed jobs with {ident}.",
        "Batch {nouns} in {cls} | {cls}.{method} now batches {nouns} in groups of {num}; memory"
        " stays flat.",
        "Pin {lib} below {ver} | Workaround for the {lib} {ver} regression: pin {lib}<{ver}"
        " until upstream fixes it.",
    ),
    "incident": (
        "{ticket} {domain} outage | {ticket}: {domain} outage in {env} for {num} minutes. Root"
        " cause: {err} in {ident} after deploy {sha}. Rolled back; follow-up: alert on {const}.",
        "Double-sent {noun} emails | Double-sent {noun} emails: {cls} retried after a timeout"
        " although the first send succeeded. Added an idempotency key ({ticket}).",
        "{domain} queue backlog | {env} {domain} queue backed up to {num}k jobs; {lib} prefetch"
        " was {num2}.",
        "Migration locked {table} | A migration locked {table} for {num} s in prod; use CREATE"
        " INDEX CONCURRENTLY.",
    ),
    "fact": (
        "{domain} rate limit | {domain} API rate limit is {num} requests per minute per tenant;"
        " {cls} enforces it.",
        "{table} partitioning | {table} is partitioned by month; queries without created_at"
        " scan every partition.",
        "{domain} local port | The {domain} service listens on port {port} locally.",
        "{const} default | {const} defaults to {num}; prod overrides it in"
        " deploy/helm/values.yaml.",
        "Callers of {ident} | {ident} is called from {file} and from the nightly job in {file2}.",
    ),
    "todo": (
        "Remove the {lib} shim | Remove the {lib} shim in {file} once every caller uses {cls}.",
        "Test for {ticket} | Add a regression test for {ticket} in {test}.",
        "Stop polling in {ident} | Replace the polling loop in {ident} with a {lib} subscription.",
        "Document {flag} | Document {flag} for the {domain} CLI in docs/{domain}.md.",
        "Move {domain} off {lib} | Migrate {domain} from {lib} to {lib2} before {ver} drops"
        " support.",
    ),
    "note": (
        "{cls} wraps {lib} | {cls} wraps {lib}; {method} is the only entry point {domain} uses.",
        "Test run | Ran `{cmd}`: {num} passed, {num2} skipped.",
        "Split {file} | {file} mixes {domain} and {domain2} logic; split it before adding {noun}"
        " support.",
        "{ticket} exports | Discussed {ticket}: {domain} wants {noun} exports in CSV and Parquet.",
        "Profiling {ident} | Profiling {ident}: most time goes to {lib} serialization ({pct}%).",
        "Review of {pr} | {pr} touched {file} and {file2}; reviewers asked for a {noun} fixture.",
    ),
    "preference": (
        "Small PRs | Prefer small PRs per {domain} change; squash merge.",
        "{lib} over {lib2} | Prefer {lib} over {lib2} for new {domain} code.",
        "Iterate with {cmd} | Use `{cmd}` rather than the full suite while iterating on {domain}.",
    ),
}
DETAILS = (
    "Related: {ident2}.",
    "Seen in {env}.",
    "Also affects {file2}.",
    "Error was: {err2}.",
    "Repro: `{cmd2}`.",
    "Tracked in {ticket2}.",
    "Touches {table}.{col}.",
    "Checked with `{cmd2}`.",
    "Applies to {cls} and {cls2} too.",
    "Since {lib} {ver}.",
    "Discussed in {pr}.",
    "Workaround until {ticket2}: {fix}.",
    "The {const} setting matters here.",
)
REASONS = ("nested transactions", "async sessions", "streaming uploads", "back-pressure")
FIXES = (
    "wrap the call in a savepoint",
    "pass timeout={num} explicitly",
    "normalise {col} before the lookup",
    "retry with exponential backoff and jitter",
    "set pool_pre_ping=True on the engine",
)
PROMPTS = (
    "Fix the failing test in {test}: it raises `{err}` since {pr}.",
    "Add a `{flag}` option to {file} so {ident} can skip archived {nouns}.",
    "Why does {cls}.{method} time out against {lib} in {env}? Look at {file}.",
    "Refactor {ident} in {file} to use {lib} instead of {lib2}.",
    "Run `{cmd}` and fix whatever breaks.",
    "The {domain} export is slow for big tenants; profile {ident} and suggest an index on {table}.",
    "Rename {cls} to {cls2} everywhere, including {file} and its tests.",
    "Write an alembic migration that adds {col} to {table} with a backfill.",
    "Review my change to {file}: does it follow our conventions for {nouns}?",
    "I get this when running `{cmd}`:\n```\nTraceback (most recent call last):\n"
    '  File "{file}", line {num}, in {ident}\n    {ident2}({noun})\n'
    '  File "{file2}", line {num2}, in {method}\n    raise\n{err}\n```\nWhat is going on?',
    "Implement {ticket}: {domain} should send a webhook when a {noun} changes. Start in {file}.",
    "Can you explain how {ident} and {ident2} interact? I'm editing {file}.",
    "continue",
    "thanks, that works; commit it",
    "Make {test} pass without changing the public API of {cls}.",
    "Bump {lib} to {ver} and fix the deprecation warnings in {dir}.",
)
QUERIES = (
    "{domain} {noun} retry",
    "{ident}",
    "{cls}",
    "{errname}",
    "how do we {verb} {nouns} in {domain}",
    "{lib} {noun} timeout",
    "convention for {noun} naming",
    "{file}",
    "{const}",
    "why {ident} fails in {env}",
    "{table} {col} index",
    "decision {lib} vs {lib2}",
)
TYPE_WEIGHTS = {
    "note": 24,
    "decision": 12,
    "warning": 12,
    "convention": 10,
    "lesson": 10,
    "solution": 8,
    "todo": 8,
    "fact": 7,
    "incident": 6,
    "preference": 3,
}


def _plural(noun: str) -> str:
    return noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")


def _camel(snake: str) -> str:
    return "".join(part.capitalize() for part in snake.split("_"))


def _cum(n: int, s: float = 1.05) -> list[float]:
    """Cumulative Zipf weights for a list of `n` items: the first few are hot."""
    return list(itertools.accumulate(1.0 / (k + 1) ** s for k in range(n)))


class _Pick:
    """Zipf choice from a sequence, order shuffled once per seed so hot items differ."""

    def __init__(self, rng: random.Random, items: Sequence[str], s: float = 1.05) -> None:
        self.items = list(items)
        rng.shuffle(self.items)
        self.cum = _cum(len(self.items), s)

    def __call__(self, rng: random.Random) -> str:
        return rng.choices(self.items, cum_weights=self.cum)[0]


@dataclass(frozen=True)
class Tree:
    """The synthetic project's files and directories, relative to its root."""

    files: list[str]
    tests: list[str]
    dirs: list[str]


def make_tree(n_records: int, seed: int = 0) -> Tree:
    """About 360 files for 10k memories, 1,060 for 100k: a longer history, a bigger codebase."""
    rng = random.Random(f"tree-{seed}")
    per_domain = min(len(MODULES), 4 + n_records // 8000)
    files, tests, dirs = list(CONFIGS), [], ["web/src/components", "migrations/versions"]
    for domain in DOMAINS:
        dirs += [f"src/{PACKAGE}/{domain}", f"tests/{domain}"]
        for module in rng.sample(MODULES, per_domain):
            files.append(f"src/{PACKAGE}/{domain}/{module}.py")
            tests.append(f"tests/{domain}/test_{module}.py")
        files.append(f"web/src/components/{_camel(domain)}{rng.choice(SUFFIXES)}.tsx")
    for n in range(1, 1 + per_domain * 4):
        files.append(f"migrations/versions/{n:04d}_{rng.choice(VERBS)}_{rng.choice(NOUNS)}.py")
    return Tree(files=files + tests, tests=tests, dirs=dirs)


def materialise(tree: Tree, root: str) -> None:
    """Write every file of `tree` under `root` (scope targets must exist)."""
    for rel in tree.files:
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"# {rel}\n")


class _Slots:
    """Draws one consistent set of slot values (a file, an identifier, an error...)."""

    def __init__(self, tree: Tree, seed: int) -> None:
        rng = random.Random(f"vocab-{seed}")
        self.domain, self.noun = _Pick(rng, DOMAINS, 0.8), _Pick(rng, NOUNS, 0.9)
        self.verb, self.lib = _Pick(rng, VERBS, 0.9), _Pick(rng, LIBS)
        self.suffix, self.file = _Pick(rng, SUFFIXES), _Pick(rng, tree.files, 0.7)
        self.test, self.dir = _Pick(rng, tree.tests, 0.7), _Pick(rng, tree.dirs, 0.7)
        self.error, self.command = _Pick(rng, ERRORS, 0.8), _Pick(rng, COMMANDS, 0.8)

    def draw(self, rng: random.Random) -> dict[str, str]:
        domain, noun, noun2, verb = self.domain(rng), self.noun(rng), self.noun(rng), self.verb(rng)
        s = {
            "domain": domain,
            "domain2": self.domain(rng),
            "Domain": _camel(domain),
            "noun": noun,
            "verb": verb,
            "ident": f"{verb}_{noun}" + (f"_{noun2}" if rng.random() < 0.4 else ""),
            "ident2": f"{self.verb(rng)}_{self.noun(rng)}",
            "cls": _camel(noun) + self.suffix(rng),
            "cls2": _camel(noun2) + self.suffix(rng),
            "method": f"{self.verb(rng)}_{noun2}",
            "const": f"{domain.upper()}_{noun.upper()}_{rng.choice(['TIMEOUT_S', 'MAX', 'TTL'])}",
            "file": self.file(rng),
            "file2": self.file(rng),
            "test": self.test(rng),
            "dir": self.dir(rng),
            "lib": self.lib(rng),
            "lib2": self.lib(rng),
            "nouns": _plural(noun),
            "table": f"{domain}_{_plural(noun)}",
            "col": f"{noun2}_id",
            "num": str(rng.choice([2, 3, 5, 8, 10, 30, 45, 60, 120, 250, 500, 1000])),
            "num2": str(rng.randint(2, 900)),
            "pct": str(rng.randint(20, 90)),
            "port": str(rng.randint(5000, 9999)),
            "hex": f"{rng.randrange(128, 256):02x}",
            "ver": f"{rng.randint(0, 5)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
            "ticket": f"{domain[:4].upper()}-{rng.randint(100, 9999)}",
            "ticket2": f"{self.domain(rng)[:4].upper()}-{rng.randint(100, 9999)}",
            "pr": f"#{rng.randint(100, 20000)}",
            "sha": f"{rng.getrandbits(28):07x}",
            "env": rng.choice(ENVS),
            "flag": rng.choice(FLAGS),
            "reason": rng.choice(REASONS),
        }
        s["err"] = self.error(rng).format(**s)
        s["err2"] = self.error(rng).format(**s)
        s["errname"] = s["err"].split(":")[0]
        s["cmd"], s["cmd2"] = self.command(rng).format(**s), self.command(rng).format(**s)
        s["fix"] = rng.choice(FIXES).format(**s)
        return s


@dataclass(frozen=True)
class Corpus:
    tree: Tree
    records: list[dict]
    seed: int

    @property
    def scoped_files(self) -> list[str]:
        """Files that memories are scoped to, most memories first."""
        counts: dict[str, int] = {}
        for r in self.records:
            if r["scope"] in ("file", "symbol"):
                path = r["target"].partition("::")[0]
                counts[path] = counts.get(path, 0) + 1
        return sorted(counts, key=lambda p: (-counts[p], p))


def make_corpus(n: int, seed: int = 0) -> Corpus:
    """`n` memories of a synthetic project, the same for the same (n, seed)."""
    tree = make_tree(n, seed)
    slots, rng = _Slots(tree, seed), random.Random(f"records-{seed}")
    types, weights = list(TYPE_WEIGHTS), list(TYPE_WEIGHTS.values())
    records = []
    for i in range(n):
        kind = rng.choices(types, weights)[0]
        s = slots.draw(rng)
        title, _, text = rng.choice(TEMPLATES[kind]).format(**s).partition(" | ")
        parts = [text]
        parts += [d.format(**s) for d in rng.sample(DETAILS, rng.choice([0, 1, 1, 2, 2, 3]))]
        scope, target, roll = "project", None, rng.random()
        if roll < 0.30:
            scope, target = "file", s["file"]
        elif roll < 0.36:
            scope, target = "directory", s["dir"]
        elif roll < 0.40 and s["file"].endswith(".py"):
            scope, target = "symbol", f"{s['file']}::{s['cls']}.{s['method']}"
        tags = [s["domain"], *rng.sample(TAGS, rng.choice([0, 1, 1, 2]))]
        if rng.random() < 0.3:
            tags.append(s["lib"])
        records.append(
            {
                "key": f"bench-{seed}-{i}",
                "type": kind,
                "title": title if rng.random() < 0.6 else None,
                "content": " ".join(parts),
                "tags": tags,
                "scope": scope,
                "target": target,
                "priority": rng.choices([0, 1, 2, 3, 5, -2], [80, 7, 5, 3, 2, 3])[0],
                "pinned": rng.random() < 0.003,
                "timestamp": time.strftime(
                    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(ANCHOR - rng.randrange(730 * 86400))
                ),
            }
        )
    return Corpus(tree=tree, records=records, seed=seed)


def make_prompts(corpus: Corpus, n: int, seed: int = 1) -> list[str]:
    """Coding requests; about 40% name a file that has scoped memories."""
    slots, rng = _Slots(corpus.tree, corpus.seed), random.Random(f"prompts-{seed}")
    hot = corpus.scoped_files[:200] or corpus.tree.files
    out = []
    for _ in range(n):
        s = slots.draw(rng)
        if rng.random() < 0.4:
            s["file"] = rng.choice(hot)
        out.append(rng.choice(PROMPTS).format(**s))
    return out


def make_queries(corpus: Corpus, n: int, seed: int = 2) -> list[str]:
    """What an agent asks recall: keywords, identifiers, errors, questions; a third prompts."""
    slots, rng = _Slots(corpus.tree, corpus.seed), random.Random(f"queries-{seed}")
    prompts = make_prompts(corpus, n, seed + 100)
    return [
        prompts[i] if rng.random() < 0.33 else rng.choice(QUERIES).format(**slots.draw(rng))
        for i in range(n)
    ]


def load(conn: apsw.Connection, project: Project, records: list[dict], batch: int = 1000) -> float:
    """Insert `records` through make_draft + store.insert, `batch` per transaction; seconds.

    A named project has no files, so its scoped records fall back to project scope.
    """
    started = time.perf_counter()
    for start in range(0, len(records), batch):
        with db.write(conn):
            for r in records[start : start + batch]:
                scoped = project.files is not None and r["scope"] != "project"
                draft = make_draft(
                    project,
                    type=r["type"],
                    content=r["content"],
                    title=r["title"],
                    scope=r["scope"] if scoped else "project",
                    target=r["target"] if scoped else None,
                    tags=r["tags"],
                    priority=r["priority"],
                    pinned=r["pinned"],
                    event_time=r["timestamp"],
                    key=r["key"],
                    actor="import",
                    client="bench",
                )
                store.insert(conn, project, draft)
    return time.perf_counter() - started


def import_jsonl(
    conn: apsw.Connection, project: Project, records: list[dict]
) -> tuple[dict, float]:
    """Load `records` through the importer (`waymark import`'s code); (report, seconds)."""
    lines = (
        json.dumps(
            {
                "key": r["key"],
                "content": r["content"],
                "title": r["title"],
                "type": r["type"],
                "tags": r["tags"],
                "timestamp": r["timestamp"],
            }
        )
        for r in records
    )
    started = time.perf_counter()
    report = importer.import_lines(conn, project, lines)
    return report.to_dict(), time.perf_counter() - started


def text_vectors(texts: list[str], dim: int = 384, seed: int = 0) -> Any:
    """Bag-of-words projections of `texts` (see VECTOR_NOTE): an (n, dim) float32 matrix of
    unit rows, the same for the same text and seed. Words hash into WORD_ROWS fixed rows."""
    import numpy as np

    table = _TABLES.get((dim, seed))
    if table is None:
        rng = np.random.default_rng(seed)
        table = _TABLES[(dim, seed)] = rng.standard_normal((WORD_ROWS, dim), dtype=np.float32)
    tokens = [re.findall(r"[a-z0-9]+", text.lower()) or ["empty"] for text in texts]
    flat = np.fromiter(
        (zlib.crc32(w.encode()) % WORD_ROWS for words in tokens for w in words), dtype=np.int64
    )
    starts = np.cumsum([0] + [len(words) for words in tokens[:-1]])
    summed = np.add.reduceat(table[flat], starts, axis=0)
    summed /= np.linalg.norm(summed, axis=1, keepdims=True)
    noise = np.random.default_rng(seed + len(texts)).standard_normal(summed.shape, dtype=np.float32)
    summed += 0.05 * noise / np.sqrt(dim)
    summed /= np.linalg.norm(summed, axis=1, keepdims=True)
    return summed


WORD_ROWS = 1 << 16
_TABLES: dict[tuple[int, int], Any] = {}


def fill_vectors(
    conn: apsw.Connection, project_id: str | None, seed: int = 0, batch: int = 5000
) -> tuple[int, float]:
    """Give every active memory lacking one a vector from `text_vectors` that counts as
    current (model embed.ENGLISH.id, text_hash of its embed text); (count, seconds)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    started = time.perf_counter()
    todo = vectors.missing(conn, embed.ENGLISH.id, project_id)
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        matrix = text_vectors([text for _, text in chunk], embed.ENGLISH.dim, seed)
        rows = [
            (rowid, embed.ENGLISH.id, embed.ENGLISH.dim, vectors.text_hash(text), vectors.pack(vec))
            for (rowid, text), vec in zip(chunk, matrix, strict=True)
        ]
        with db.write(conn):
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (memory_rowid, model, dim, text_hash, vector)"
                " VALUES (?, ?, ?, ?, ?)",
                rows,
            )
    return len(todo), time.perf_counter() - started


def db_bytes(path: str) -> int:
    """The database file plus its WAL, as it stands."""
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    sample = make_corpus(max(count, 1000))
    for record in sample.records[:count]:
        print(json.dumps(record, ensure_ascii=False))
    for prompt in make_prompts(sample, count):
        print("PROMPT:", prompt.replace("\n", " | "))
    for query in make_queries(sample, count):
        print("QUERY:", query.replace("\n", " | "))
