"""Origins: the allow-list check and where a browser is sent after success."""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList

_DEFAULT_PORTS = {"http": 80, "https": 443}
# Only ASCII whitespace is trimmed: `str.strip()` would also take `\u2028`, `\xa0`...,
# which a browser keeps (percent-encoded) as part of the host.
_ASCII_SPACE = " \t\r\n\f\v"


def _unsafe(ch: str) -> bool:
    """A character no URL sent to a browser may hold: `\\` (read as `/`), any
    whitespace (browsers drop or keep them where urllib does the opposite), and
    control, format (zero-width) or unassigned code points."""
    return ch == "\\" or ch.isspace() or unicodedata.category(ch)[0] == "C"


def normalize_origin(value: str) -> str | None:
    """`scheme://host[:port]` in lower case without a default port, or None if not one
    (a host holding whitespace or a control character is none)."""
    try:
        parts = urlsplit(value.strip(_ASCII_SPACE))
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    if any(_unsafe(ch) for ch in parts.netloc):
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


@functools.cache
def _public_suffixes() -> PublicSuffixList:
    # The list bundled with the package, read once when first needed (about half a
    # second): never fetched at run time, so a check works offline and gives the same
    # answer on every host of one release. An upgrade of the package brings a newer list.
    # Imported here: only a change of a form's origins needs it, never a submission or
    # the start of a command.
    from publicsuffixlist import PublicSuffixList  # noqa: PLC0415

    return PublicSuffixList()


def wildcard_suffix(pattern: str) -> str | None:
    """For a normalised `scheme://*.domain[:port]` entry, its domain when that domain is a
    public suffix (`com`, `co.uk`, `github.io`, or any single label the list does not
    know, as the list's own default rule has it): such an entry stands for every site
    under the suffix, anyone's. None for an origin, or a wildcard over a domain someone
    registered (`*.example.com`)."""
    if "://*." not in pattern:
        return None
    domain = urlsplit(pattern.replace("://*.", "://", 1)).hostname
    if not domain or not _public_suffixes().is_public(domain):
        return None
    return domain


def origin_allowed(origin: str | None, allowed: Iterable[str]) -> bool:
    if not origin:
        return False
    candidate = normalize_origin(origin)
    return candidate is not None and _listed(candidate, allowed)


def _listed(candidate: str, allowed: Iterable[str]) -> bool:
    """Whether a normalised origin is on the list, compared as it is: never normalised
    again, so the string that passes is the string that goes on."""
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
    origin or an allowed one (never an open redirect); else None, the thank-you page.
    A `_next` that is a path (`/thanks`) is on the requesting page's origin: it is
    resolved against the request's Origin."""
    if redirect_url:
        return redirect_url
    if not next_url:
        return None
    location = next_url.strip(_ASCII_SPACE)
    if any(_unsafe(ch) for ch in location):
        # Browsers read `\` as `/` and drop tabs and newlines, so `https://evil.com\@ok.com`
        # goes to evil.com although urlsplit finds ok.com; and a space Python would trim
        # is sent on as part of the host: never send such a value on.
        return None
    request = normalize_origin(request_origin) if request_origin else None
    if location.startswith("/"):
        return _on_origin(location, request)
    target = normalize_origin(location)
    if target is None:
        return None
    if target == request or _listed(target, allowed):
        return location
    return None


def _on_origin(path: str, origin: str | None) -> str | None:
    """A path on the request's origin. `//host` (and `/\\host`, refused before) is a
    scheme-relative URL to another host, and no path: refused. The joined URL is
    checked once more, as the very string sent on."""
    if origin is None or path.startswith("//"):
        return None
    location = origin + path
    return location if normalize_origin(location) == origin else None
