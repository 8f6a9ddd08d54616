#!/usr/bin/env bash
# Install Waymark for this user: an isolated environment in Waymark's own folder, `waymark`
# on PATH, the embedding model, then `waymark install` to connect the Claude Code and Codex
# found on this machine. Hooks capture in every git repository unless --per-project. Re-running
# upgrades in place.
#
#   ./install.sh [--no-semantic] [--no-clients] [--per-project] [--dry-run]
#
# WAYMARK_PREFIX   where the environment goes (default: the platform data folder + /env)
# WAYMARK_BIN_DIR  where the `waymark` link goes (default: ~/.local/bin)
set -euo pipefail

say() { printf 'waymark-install: %s\n' "$*"; }
die() { printf 'waymark-install: error: %s\n' "$*" >&2; exit 1; }

semantic=1
clients=1
per_project=0
dry_run=0
for arg in "$@"; do
    case "$arg" in
        --no-semantic) semantic=0 ;;
        --no-clients) clients=0 ;;
        --per-project) per_project=1 ;;
        --dry-run) dry_run=1 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) die "unknown option $arg (see --help)" ;;
    esac
done

src="$(cd "$(dirname "$0")" && pwd)"
[ -f "$src/pyproject.toml" ] || die "run install.sh from a Waymark checkout ($src has no pyproject.toml)"

case "$(uname -s)" in
    Darwin) default_prefix="$HOME/Library/Application Support/waymark/env" ;;
    *) default_prefix="${XDG_DATA_HOME:-$HOME/.local/share}/waymark/env" ;;
esac
prefix="${WAYMARK_PREFIX:-$default_prefix}"
bin_dir="${WAYMARK_BIN_DIR:-$HOME/.local/bin}"

find_python() {
    local candidate
    for candidate in python3.13 python3.12 python3.11 python3.10 python3 python; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

# Whether the installed Waymark finds the embedding model without the network (a folder it
# was given, or the one it downloaded before): then nothing is fetched.
model_here() {
    [ -x "$prefix/bin/python" ] && "$prefix/bin/python" -c \
        'import sys; from waymark.recall import embed; sys.exit(not embed.semantic_available()[0])' \
        2>/dev/null
}

if [ "$dry_run" = 1 ]; then
    say "dry run: nothing is written"
    say "would create or upgrade the environment $prefix and install Waymark from $src" \
        "($([ "$semantic" = 1 ] && echo 'with' || echo 'without') semantic recall)"
    say "would link $bin_dir/waymark -> $prefix/bin/waymark"
    if [ "$semantic" = 1 ]; then
        if model_here; then
            say "would use the embedding model already here (nothing to fetch)"
        else
            say "would fetch the embedding model (about 90 MB) with 'waymark index'"
        fi
    fi
    if [ "$per_project" = 1 ]; then
        say "would set capture per project: hooks stay silent until 'waymark enable' in a repository"
    else
        say "would keep the capture mode (on in every git repository unless you chose otherwise: capture.all_git_repos)"
    fi
    if [ "$clients" = 1 ]; then
        if [ -x "$prefix/bin/waymark" ]; then
            say "would connect the clients; 'waymark install --dry-run' shows the changes:"
            "$prefix/bin/waymark" install --dry-run || true
        else
            say "would connect the Claude Code and Codex found here ('waymark install')"
        fi
    fi
    exit 0
fi

# The data folder holds the memories: owner-only from the start, as `waymark doctor` checks.
data_home="${WAYMARK_HOME:-$(dirname "$default_prefix")}"
(umask 077 && mkdir -p "$data_home") && chmod 700 "$data_home" ||
    die "could not create the data folder $data_home owner-only"
mkdir -p "$(dirname "$prefix")"
if command -v uv >/dev/null 2>&1; then
    say "creating the environment with uv in $prefix"
    [ -x "$prefix/bin/python" ] || uv venv --quiet --python '>=3.10' "$prefix" ||
        die "uv could not create an environment with Python >= 3.10"
    pip_install() { uv pip install --quiet --python "$prefix/bin/python" "$@"; }
else
    python="$(find_python)" || die "Waymark needs Python 3.10 or newer; none found on PATH"
    say "creating the environment with $python in $prefix"
    [ -x "$prefix/bin/python" ] || "$python" -m venv "$prefix" ||
        die "could not create a virtual environment (on Debian/Ubuntu: apt install python3-venv)"
    "$prefix/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
    pip_install() { "$prefix/bin/python" -m pip install --quiet "$@"; }
fi

# Waymark's dependencies are the locked versions the tests passed with (requirements/, every
# file's hash checked); Waymark itself after them, without resolving anything again.
with_semantic=0
if [ "$semantic" = 1 ] && pip_install --require-hashes -r "$src/requirements/install.txt"; then
    with_semantic=1
    say "installed the semantic extra (fastembed, sqlite-vec)"
else
    [ "$semantic" = 1 ] && say "semantic extra unavailable here; installing lexical recall only"
    pip_install --require-hashes -r "$src/requirements/lexical.txt" ||
        die "pip could not install the locked dependencies (requirements/lexical.txt)"
fi
# Before 0.2.0 the distribution was named waymark: one owner for Waymark's files.
if "$prefix/bin/python" -m pip --version >/dev/null 2>&1; then
    "$prefix/bin/python" -m pip uninstall --quiet --yes waymark >/dev/null 2>&1 || true
elif command -v uv >/dev/null 2>&1; then
    uv pip uninstall --quiet --python "$prefix/bin/python" waymark >/dev/null 2>&1 || true
fi
# --force-reinstall: the same version number with new code still replaces Waymark itself.
pip_install --force-reinstall --no-deps "$src" || die "pip could not install Waymark from $src"
# Waymark's own launcher in place of pip's console script, which imports `re` before Waymark
# runs (`waymark --version` 19 -> 12 ms as whole processes). -I: a project's PYTHONPATH never
# shadows Waymark's packages. pip's script stays where a shebang cannot hold the path.
launcher="$prefix/bin/waymark"
case "$prefix" in
    *[[:space:]]*) ;;
    *) if [ "${#prefix}" -le 110 ]; then
           printf '#!%s -I\nfrom waymark.cli import entry\nentry()\n' \
               "$prefix/bin/python" >"$launcher.new" && chmod 755 "$launcher.new" &&
               mv -f "$launcher.new" "$launcher" || die "could not write $launcher"
       fi ;;
esac
say "locked versions: $("$prefix/bin/python" - <<'PY'
from importlib.metadata import PackageNotFoundError, version
out = []
for name in ("mcp", "pydantic", "apsw", "jinja2", "fastembed", "onnxruntime", "psycopg"):
    try:
        out.append(f"{name} {version(name)}")
    except PackageNotFoundError:
        pass
print(", ".join(out))
PY
)"

mkdir -p "$bin_dir"
ln -sf "$prefix/bin/waymark" "$bin_dir/waymark"
say "linked $bin_dir/waymark"
# What `waymark uninstall --all` removes: this environment and that link.
printf '{"environment": "%s", "link": "%s"}\n' "$prefix" "$bin_dir/waymark" >"$prefix/waymark-install.json"
case ":$PATH:" in
    *":$bin_dir:"*) ;;
    *) say "add $bin_dir to your PATH, e.g. echo 'export PATH=\"$bin_dir:\$PATH\"' >> ~/.bashrc" ;;
esac

wm() { (cd "$HOME" && "$prefix/bin/waymark" "$@"); }  # never about the checkout's project
wm status >/dev/null || die "waymark was installed but 'waymark status' failed"
# Only --per-project changes the capture mode: a re-run keeps whatever the user chose.
if [ "$per_project" = 1 ]; then
    wm config capture.all_git_repos false >/dev/null || die "could not set the capture mode"
fi
everywhere="$(wm config capture.all_git_repos)" || die "could not read the capture mode"
case "$everywhere" in
    *true) capture="on in every git repository (per project instead: 'waymark config capture.all_git_repos false', then 'waymark enable' where you want it)" ;;
    *) capture="per project: hooks stay silent until you run 'waymark enable' in a repository (every repository: 'waymark config capture.all_git_repos true')" ;;
esac
if [ "$with_semantic" = 1 ]; then
    if model_here; then
        say "the embedding model is here already; embedding what has no vector yet"
    else
        say "fetching the embedding model (about 90 MB, once)"
    fi
    if wm index --all-projects; then
        recall="semantic and lexical (the MCP server embeds new memories by itself)"
    else
        recall="lexical until the embedding model is fetched: run 'waymark index' when online"
    fi
else
    recall="lexical (installed without the semantic extra)"
fi
if [ "$clients" = 1 ]; then
    say "connecting Claude Code and Codex (waymark install)"
    wm install ||
        die "Waymark is installed, but connecting the clients failed (see above); fix that and run 'waymark install'"
else
    say "skipped connecting the clients; run 'waymark install' when you want them"
fi
wm status | grep '^database' | sed 's/^/waymark-install: /' || true
say "capture: $capture"
say "recall: $recall"
if [ "$per_project" = 1 ]; then
    say "done: run 'waymark enable' in a repository, then open Claude Code or Codex there"
else
    say "done: open Claude Code or Codex in any git repository"
fi
