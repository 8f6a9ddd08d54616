"""Who may talk to Waymark's local web faces (the dashboard, the memory proxy): a `Host` or
`Origin` header read as a parsed address and compared exactly, never by prefix.

`http://localhost.evil.example`, `http://127.0.0.1.nip.io` and `https://127.0.0.1.evil.example`
begin like loopback addresses and are other machines' names: a web page there must not reach
the proxy (which may hold the user's API key) or the dashboard.
"""

from __future__ import annotations

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
SCHEMES = ("http", "https")


def host_of(value: str) -> tuple[str, str]:
    """(host, port) of a `Host` header or an origin's authority: `[::1]:8795` -> ("::1",
    "8795"), `LocalHost` -> ("localhost", ""); ("", "") when it is neither. Hosts come back
    lower-cased, without brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        if rest and not rest.startswith(":"):
            return "", ""  # `[::1].evil.example`: not an address and a port
        return host, rest[1:]
    host, _, port = value.partition(":")
    return host, port


def is_loopback(host: str) -> bool:
    """True for a loopback name or address: `localhost`, 127.0.0.0/8, ::1."""
    if host in LOOPBACK_NAMES:
        return True
    parts = host.split(".")
    return (
        len(parts) == 4
        and parts[0] == "127"
        and all(p.isdigit() and len(p) <= 3 and int(p) <= 255 for p in parts)
    )


def split_origin(origin: str) -> tuple[str, str, str] | None:
    """(scheme, host, port) of an `Origin` header, None for anything that is not one exact
    origin (`null`, a path, credentials, several values, an unknown scheme)."""
    scheme, sep, authority = origin.strip().partition("://")
    if not sep or scheme.lower() not in SCHEMES or not authority:
        return None
    if any(ch in authority for ch in "/?#@ ,\\"):
        return None
    host, port = host_of(authority)
    if not host or (port and not port.isdigit()):
        return None
    return scheme.lower(), host, port


def loopback_origin(origin: str) -> bool:
    """An `Origin` whose host is this machine's loopback, exactly."""
    parts = split_origin(origin)
    return parts is not None and is_loopback(parts[1])


def same_origin(origin: str, hosts: set[str]) -> bool:
    """An `Origin` that is `http://` one of `hosts` (each `host:port` as the face serves it)."""
    parts = split_origin(origin)
    if parts is None or parts[0] != "http":
        return False
    _, host, port = parts
    shown = f"[{host}]" if ":" in host else host
    return (f"{shown}:{port}" if port else shown) in {h.lower() for h in hosts}


def upstream_url(value: str) -> str | None:
    """`value` as an upstream base URL (http or https, a host, a port 1-65535 where one is
    written), without its trailing slash; None when it is not one (`http://127.0.0.1:`)."""
    scheme, sep, rest = value.strip().partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        return None
    authority = rest.split("/", 1)[0]
    if not authority or any(ch in authority for ch in "?#@ ,\\"):
        return None
    host, port = host_of(authority)
    if (
        not host
        or authority.endswith(":")
        or (port and not (port.isdigit() and 0 < int(port) < 65536))
    ):
        return None
    return value.strip().rstrip("/")
