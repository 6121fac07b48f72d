"""Origins: the allow-list check and where a browser is sent after success."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_origin(value: str) -> str | None:
    """`scheme://host[:port]` in lower case without a default port, or None if not one."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{host}:{port}"


def normalize_pattern(value: str) -> str | None:
    """An allow-list entry: an origin, or `scheme://*.domain` for every subdomain."""
    if "://*." in value:
        scheme, _, rest = value.partition("://*.")
        base = normalize_origin(f"{scheme}://{rest}")
        return None if base is None else base.replace("://", "://*.", 1)
    return normalize_origin(value)


def origin_allowed(origin: str | None, allowed: Iterable[str]) -> bool:
    if not origin:
        return False
    candidate = normalize_origin(origin)
    if candidate is None:
        return False
    for entry in allowed:
        pattern = normalize_pattern(entry)  # entries are kept normalized; this is a guard
        if pattern is None:
            continue
        if pattern == candidate:
            return True
        if "://*." in pattern:
            scheme, _, suffix = pattern.partition("://*.")
            c_scheme, _, c_host = candidate.partition("://")
            if c_scheme == scheme and c_host.endswith("." + suffix):
                return True
    return False


def redirect_target(
    *,
    redirect_url: str | None,
    next_url: str | None,
    request_origin: str | None,
    allowed: Iterable[str],
) -> str | None:
    """The form's redirect URL; else `_next` when it points at the requesting page's own
    origin or an allowed one (never an open redirect); else None, the thank-you page."""
    if redirect_url:
        return redirect_url
    if not next_url:
        return None
    location = next_url.strip()
    if any(ch == "\\" or ch <= " " or ch == "\x7f" for ch in location):
        # Browsers read `\` as `/` and drop tabs and newlines, so `https://evil.com\@ok.com`
        # goes to evil.com although urlsplit finds ok.com: never send such a value on.
        return None
    target = normalize_origin(location)
    if target is None:
        return None
    request = normalize_origin(request_origin) if request_origin else None
    if target == request or origin_allowed(target, allowed):
        return location
    return None
