"""Marker files in the data folder: what a hook remembers without a database write.

One file per key in a folder of the data home, owner-only, its modification time the moment
it was marked. `mark` says whether the key was already marked within a window; old markers
are swept now and then. The hooks use it to run each delivered event once (`hookruns/`) and
to let a guarded call through the second time the user asks (`guard/`); the MCP server's
`hook` tool marks the prompts it answers in the same folder, under the same keys as the
prompt hook (`prompt_key`), so whichever route comes first answers and the other says nothing.
"""

from __future__ import annotations

import os
import time

from waymark import home


def mark(folder_name: str, key: str, within_s: float, *, sweep_each: bool = False) -> bool:
    """True when `key` was already marked in the data folder's `folder_name` in the last
    `within_s` seconds; otherwise mark it now and return False. An older marker counts as
    none and is renewed. Old markers are swept at each new one with `sweep_each` (a folder
    seldom written), else now and then. OSError when the folder cannot be written (the
    caller decides)."""
    folder = os.path.join(home.data_home(), folder_name)
    path = os.path.join(folder, key)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        if time.time() - os.stat(path).st_mtime < within_s:
            return True
        os.utime(path)
        return False
    if sweep_each or key.endswith("0"):  # a key is a hash: one in 16
        sweep(folder, within_s)
    return False


DEDUPE_DIR = "hookruns"
DEDUPE_WINDOW_S = 30.0


def delivery_key(name: str, raw: bytes) -> str:
    """What names one delivery of one event: its name and its payload's length and checksum
    (payloads carry unique ids: a tool call's, a prompt's)."""
    return f"{name}-{len(raw):x}-{checksum(raw)}"


def checksum(raw: bytes) -> str:
    """`raw` read as one number, modulo the prime 2**61 - 1 (two different payloads of one
    length agree with odds of about 2**-61 each), where it is short; zlib's crc32 and adler32
    of a long one (a tool's long output), which the modulo would take longer over. Loading
    zlib cost every hook 0.3-0.5 ms; the modulo takes 15 us over a 2 KB payload."""
    if len(raw) <= CHECKSUM_SHORT:
        return f"{int.from_bytes(raw, 'little') % MERSENNE_61:016x}"
    import zlib

    return f"{zlib.crc32(raw):08x}-{zlib.adler32(raw):08x}"


CHECKSUM_SHORT = 1 << 16
MERSENNE_61 = (1 << 61) - 1


def prompt_key(session_id: str, prompt_id: str, prompt: str) -> str:
    """One prompt of one session, however it reached Waymark: a command hook's payload or
    the MCP `hook` tool's arguments. By its `prompt_id` (Claude Code gives both the same);
    by its text where a client sends none (the same prompt twice within the window then
    runs once, as an identical payload always did)."""
    name = prompt_id or "text\0" + prompt
    return delivery_key("UserPromptSubmit-p", f"{session_id}\0{name}".encode("utf-8", "replace"))


def first_delivery(key: str) -> bool:
    """False when this exact event was already delivered to Waymark: the plugin route and
    the `waymark install` route may both be registered, a prompt may come both as a command
    hook and as an MCP call, and each event must run once."""
    if not os.path.isdir(home.data_home()):
        return True
    try:
        return not mark(DEDUPE_DIR, key, DEDUPE_WINDOW_S)
    except OSError:
        return True  # no marker: run it (a second run is safer than none)


def sweep(folder: str, older_than_s: float) -> None:
    """Remove the markers of `folder` older than `older_than_s` seconds; never raises."""
    cutoff = time.time() - older_than_s
    try:
        for entry in os.scandir(folder):
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue
    except OSError:
        pass


QUIET_DIR = "quiet"  # a marker per session whose current turn records nothing
QUIET_KEPT_S = 86400.0  # a turn outlives no day; older markers are swept


def _quiet_path(session_id: str) -> str:
    name = checksum(session_id.encode("utf-8", "replace"))
    return os.path.join(home.data_home(), QUIET_DIR, name)


def quiet_turn(session_id: str, quiet: bool) -> None:
    """A prompt starts a turn: one that said `#no-capture` records nothing until the next
    prompt (`projects.capture.policy`; a marker file, as a read-only session writes no
    database); any other prompt ends that."""
    path = _quiet_path(session_id)
    if quiet:
        mark(QUIET_DIR, os.path.basename(path), QUIET_KEPT_S, sweep_each=True)
        os.utime(path)
    elif os.path.exists(path):
        os.remove(path)


def turn_quiet(session_id: str) -> bool:
    """Whether the session's current turn said `#no-capture` (within the last day)."""
    try:
        return time.time() - os.stat(_quiet_path(session_id)).st_mtime < QUIET_KEPT_S
    except OSError:
        return False
