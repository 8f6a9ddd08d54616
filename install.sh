#!/usr/bin/env bash
# Install Waymark for this user: an isolated environment in Waymark's own folder, `waymark`
# on PATH, a first `waymark status`, then `waymark install` to connect the Claude Code and
# Codex found on this machine. Re-running upgrades in place.
#
#   ./install.sh [--no-semantic] [--no-clients]
#
# WAYMARK_PREFIX   where the environment goes (default: the platform data folder + /env)
# WAYMARK_BIN_DIR  where the `waymark` link goes (default: ~/.local/bin)
set -euo pipefail

say() { printf 'waymark-install: %s\n' "$*"; }
die() { printf 'waymark-install: error: %s\n' "$*" >&2; exit 1; }

semantic=1
clients=1
for arg in "$@"; do
    case "$arg" in
        --no-semantic) semantic=0 ;;
        --no-clients) clients=0 ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
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

if [ "$semantic" = 1 ] && pip_install --upgrade "$src[semantic]"; then
    say "installed with semantic recall (fastembed, sqlite-vec)"
else
    [ "$semantic" = 1 ] && say "semantic extra unavailable here; installing lexical recall only"
    pip_install --upgrade "$src" || die "pip could not install Waymark from $src"
fi
# Same version number, new code: make re-running really upgrade Waymark itself.
pip_install --force-reinstall --no-deps "$src" || die "pip could not reinstall Waymark"

mkdir -p "$bin_dir"
ln -sf "$prefix/bin/waymark" "$bin_dir/waymark"
say "linked $bin_dir/waymark"
case ":$PATH:" in
    *":$bin_dir:"*) ;;
    *) say "add $bin_dir to your PATH, e.g. echo 'export PATH=\"$bin_dir:\$PATH\"' >> ~/.bashrc" ;;
esac

"$prefix/bin/waymark" status || die "waymark was installed but 'waymark status' failed"
if [ "$clients" = 1 ]; then
    say "connecting Claude Code and Codex (waymark install)"
    "$prefix/bin/waymark" install ||
        die "Waymark is installed, but connecting the clients failed (see above); fix that and run 'waymark install'"
else
    say "skipped connecting the clients; run 'waymark install' when you want them"
fi
say "done"
