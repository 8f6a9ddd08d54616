"""Waymark's errors: small, named, each with a stable code.

The CLI prints them as one line (or `{code, message, details}` with --json) and exits 1;
the MCP server returns the same code in its tool error. Hooks log them and fail open.
"""

from __future__ import annotations

TYPE_CHECKING = False  # importing typing costs a hook ~2 ms

if TYPE_CHECKING:
    from typing import Any


class WaymarkError(Exception):
    """Base of every error Waymark raises on purpose."""

    code = "error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class InternalError(WaymarkError):
    """A bug in Waymark: the message names the exception; the traceback goes to the log."""

    code = "internal"


class InvalidArgument(WaymarkError):
    """A parameter is out of range or malformed."""

    code = "invalid_argument"


class InvalidType(WaymarkError):
    """A memory type outside the closed set."""

    code = "invalid_type"


class InvalidScope(WaymarkError):
    """A scope or target that is not allowed (outside the root, inside .git, ...)."""

    code = "invalid_scope"


class TargetNotFound(WaymarkError):
    """A directory, file or symbol target that does not exist."""

    code = "target_not_found"


class NotFound(WaymarkError):
    """No record, project or checkpoint with that id."""

    code = "not_found"


class Conflict(WaymarkError):
    """The record changed under the caller (already superseded, stale revision)."""

    code = "conflict"


class SchemaTooNew(WaymarkError):
    """The database was written by a newer Waymark."""

    code = "schema_too_new"


class DatabaseUnreadable(WaymarkError):
    """The database file is corrupt, not SQLite, or cannot be opened."""

    code = "database_unreadable"


class DatabaseCorrupt(WaymarkError):
    """SQLite found damage inside the database file; writes stop until it is restored."""

    code = "database_corrupt"


class ReadOnlyStore(WaymarkError):
    """The data folder or database cannot be written (a read-only home); reads still work."""

    code = "read_only"


class DiskFull(WaymarkError):
    """The disk (or quota) is full; the write was rolled back, nothing half-written kept."""

    code = "disk_full"


class ProjectError(WaymarkError):
    """The project could not be resolved."""

    code = "project_error"


class QueryTimeout(WaymarkError):
    """A query ran past its deadline and was interrupted."""

    code = "timeout"


class BackupFailed(WaymarkError):
    """A backup could not be made, checked or published."""

    code = "backup_failed"


class RestoreRefused(WaymarkError):
    """A file cannot be restored (unreadable, corrupt, not Waymark's, newer); nothing changed."""

    code = "restore_refused"


class DigestMismatch(WaymarkError):
    """An export's rows do not match its digest: changed or truncated after export."""

    code = "digest_mismatch"


class ImportConflict(WaymarkError):
    """Rows of an export clash with different rows already here; nothing was imported."""

    code = "import_conflict"


class ExportInvalid(WaymarkError):
    """A file that claims to be a Waymark export but is malformed."""

    code = "export_invalid"


class ModelUnavailable(WaymarkError):
    """The embedding model cannot be loaded, so recall stays lexical and fuzzy."""

    code = "model_unavailable"


class Int8Unavailable(ModelUnavailable):
    """No int8 copy of the model can be built here; queries use the full model."""

    code = "int8_unavailable"


class SearchUnavailable(WaymarkError):
    """Neither numpy nor sqlite-vec is available to search vectors."""

    code = "semantic_unavailable"


class ConfigMalformed(WaymarkError):
    """A user's config file cannot be parsed; nothing was changed."""

    code = "config_malformed"


class InstallRefused(WaymarkError):
    """A config file holds something Waymark will not edit safely; nothing was changed."""

    code = "install_refused"


class DataHomeUnusable(WaymarkError):
    """The data folder is not a folder, or cannot be created or written; nothing was done."""

    code = "data_home_unusable"


class TeamNotConnected(WaymarkError):
    """No team store is connected (`waymark team connect URL`, or WAYMARK_TEAM_URL)."""

    code = "team_not_connected"


class TeamMemory(WaymarkError):
    """Archiving or erasing a memory the team shares does so on every machine: it needs its
    own flag (`--team`); nothing was changed."""

    code = "team_memory"


class TeamUnreachable(WaymarkError):
    """The team store cannot be reached or refused the connection (host, role, password,
    TLS): nothing was changed on either side."""

    code = "team_unreachable"


class SecretRefused(WaymarkError):
    """A team memory never holds what the redactor flagged: the write was refused (a hard
    block, not a redaction); a personal memory may keep it, redacted, on this machine."""

    code = "secret_refused"


class CaptureRefused(WaymarkError):
    """Capture is read-only or off here: the agent's tools may read, not write."""

    code = "capture_refused"


class UsageError(WaymarkError):
    """The command line itself is wrong: an unknown flag, a missing or out-of-range value."""

    code = "usage"


def from_os_error(exc: OSError, what: str) -> WaymarkError | None:
    """Waymark's error for an OS failure while writing `what`, or None when it is not one of
    the kinds a person can act on (a full disk, a read-only file system)."""
    import errno

    what = exc.filename or what if isinstance(exc.filename, str) else what
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return DiskFull(
            f"the disk is full: cannot write {what}; nothing was changed. Free some space "
            "and run the command again",
            path=getattr(exc, "filename", None),
        )
    if exc.errno == errno.EROFS:
        return ReadOnlyStore(
            f"cannot write {what}: the file system is read-only; nothing was changed",
            path=getattr(exc, "filename", None),
        )
    return None
