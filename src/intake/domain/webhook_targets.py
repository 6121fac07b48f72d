"""Which URLs a webhook may point at: the one rule, applied when an endpoint is added and
again at every delivery (a name can be repointed after it was added).

A webhook URL must be an absolute http(s) URL. Unless private targets are allowed
(INTAKE_WEBHOOK_ALLOW_PRIVATE=true), it must use https, and its host must be public: an
address literal in any of the forms a resolver accepts (`127.1`, `0x7f000001`,
`2130706433`, `[::ffff:127.0.0.1]`...) is normalised and judged as the address it is;
`localhost` and `*.localhost` (with or without the final dot) are this machine; any other
name is resolved, and every address it resolves to must be public. Messages name the host
at most: never the URL, which may carry a token, nor an address a name resolved to, which
would map the operator's own network for whoever asks.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import urlsplit

from attrs import frozen

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# A resolver maps a host name and port to the IP addresses it would connect to; it
# raises OSError when the name cannot be resolved.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

# Not covered by every Python's is_private / is_global: carrier-grade NAT (RFC 6598).
_SHARED_ADDRESS_SPACE = ipaddress.IPv4Network("100.64.0.0/10")
# NAT64: the well-known prefix embeds an IPv4 address, which is what gets reached
# (RFC 6052); the local-use prefix points into the operator's own network (RFC 8215).
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")

# The IPv4 forms inet_aton and URL parsers accept: one to four parts, each decimal,
# octal (leading 0) or hex (0x), the last filling the remaining bytes.
_IPV4_PART = r"(?:0x[0-9a-f]*|[0-9]+)"
_IPV4_NUMBER = re.compile(rf"{_IPV4_PART}(?:\.{_IPV4_PART}){{0,3}}", re.IGNORECASE)

_DEFAULT_PORTS = {"http": 80, "https": 443}


class TargetRefused(Exception):  # noqa: N818 - a verdict, not a fault
    """The URL is one no webhook may call; the message says why (never the URL)."""


class TargetNotPublic(TargetRefused):
    """Refused for what allowing private targets lifts: plain http, or a host that is not
    public."""


class TargetUnresolved(Exception):  # noqa: N818 - a condition, retried at delivery
    """The host name could not be resolved just now; the message says why."""


@frozen
class WebhookTarget:
    """A URL that passed the rule: its scheme, host (lower case, without a final dot)
    and port, and the addresses it was checked at. `addresses` is empty when private
    targets are allowed (nothing is checked, so nothing is pinned)."""

    scheme: str
    host: str
    port: int
    addresses: tuple[IPAddress, ...]


async def check_target(url: str, *, allow_private: bool, resolve: Resolver | None) -> WebhookTarget:
    """The target of a webhook URL, checked; raises TargetRefused, or TargetUnresolved
    when a name must be resolved and cannot be. Without `resolve`, a name (not a
    literal, not this machine's) is taken as it is: it is resolved at delivery."""
    scheme, host, port = _split(url)
    if allow_private:
        return WebhookTarget(scheme, host, port, ())
    if scheme != "https":
        raise TargetNotPublic("webhook URLs must use https")
    literal = address_literal(host)
    if literal is not None:
        _check_public(literal, host, literal=True)
        return WebhookTarget(scheme, host, port, (literal,))
    if host == "localhost" or host.endswith(".localhost") or host == "localhost.localdomain":
        raise TargetNotPublic(f"{host} is this machine, not a public address")
    if resolve is None:
        return WebhookTarget(scheme, host, port, ())
    try:
        answers = await resolve(host, port)
    except OSError as exc:  # socket.gaierror: no such name, or no DNS just now
        raise TargetUnresolved(f"DNS lookup failed ({type(exc).__name__})") from None
    addresses = tuple(ipaddress.ip_address(answer.split("%", 1)[0]) for answer in answers)
    if not addresses:
        raise TargetUnresolved("DNS lookup returned no addresses")
    # Every address must pass, not only the one used: a name that resolves to a public
    # and a private address is a probe of the private one.
    for address in addresses:
        _check_public(address, host)
    return WebhookTarget(scheme, host, port, addresses)


def _split(url: str) -> tuple[str, str, int]:
    # Whitespace, control characters and backslashes are refused outright: parsers
    # disagree on them (a backslash ends the host for some, not for others).
    if any(c.isspace() or ord(c) < 0x20 or c in "\\\x7f" for c in url):
        raise TargetRefused("not a valid URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise TargetRefused("not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise TargetRefused("not an absolute http(s) URL")
    host = parts.hostname.lower()
    if host.endswith(".") and address_literal(host.rstrip(".")) is None:
        host = host[:-1]  # `name.` is the same name, absolute
    return scheme, host, port if port is not None else _DEFAULT_PORTS[scheme]


def address_literal(host: str) -> IPAddress | None:
    """The address a host names literally, normalised (`127.1` is 127.0.0.1), or None
    for a name."""
    try:
        return ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        pass
    return _ipv4_number(host)


def _ipv4_number(host: str) -> ipaddress.IPv4Address | None:
    text = host.removesuffix(".")
    if not _IPV4_NUMBER.fullmatch(text):
        return None
    try:
        parts = [_ipv4_part(part) for part in text.split(".")]
    except ValueError:
        return None  # `08` is no octal number: a name, then, for the resolver to judge
    *leading, last = parts
    if any(part > 0xFF for part in leading) or last >= 1 << (8 * (4 - len(leading))):
        return None
    value = last
    for index, part in enumerate(leading):
        value |= part << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _ipv4_part(text: str) -> int:
    lowered = text.lower()
    if lowered.startswith("0x"):
        return int(lowered[2:] or "0", 16)
    if len(lowered) > 1 and lowered.startswith("0"):
        return int(lowered, 8)
    return int(lowered)


def is_public_address(address: IPAddress) -> bool:
    """Whether an address is on the public internet, not in anyone's own network."""
    if isinstance(address, ipaddress.IPv6Address):
        # Forms that carry an IPv4 address are judged by the IPv4 address reached.
        if address.ipv4_mapped is not None:
            return is_public_address(address.ipv4_mapped)
        if address in _NAT64_WELL_KNOWN:
            return is_public_address(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        if address in _NAT64_LOCAL_USE:
            return False
        if address.sixtofour is not None:
            return is_public_address(address.sixtofour)
        if address.teredo is not None:
            return False  # a tunnel to a host behind NAT: not a webhook receiver
        if address.is_site_local:
            return False  # fec0::/10, deprecated (RFC 3879) but still routed inside sites
    elif address in _SHARED_ADDRESS_SPACE:
        return False
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


def _check_public(address: IPAddress, host: str, *, literal: bool = False) -> None:
    """The refusal names the host as it was given, never the address a name resolved to:
    that would tell a caller what the operator's own network holds."""
    if not is_public_address(address):
        if literal:
            raise TargetNotPublic(f"{host} is not a public address")
        raise TargetNotPublic(f"{host} resolves to an address that is not public")


class AlreadyAnEndpoint(Exception):  # noqa: N818 - a condition the caller words
    """The form has an endpoint at this URL already: nothing was added."""


def same_endpoint_url(first: str, second: str) -> bool:
    """Whether two webhook URLs reach the same receiver with the same request, so that a
    form holding both would have every event delivered twice: the scheme and host in
    any case, the default port written or not, an empty path as `/`, the fragment
    (never sent) left out; the path and query as written."""
    return _endpoint_key(first) == _endpoint_key(second)


def _endpoint_key(url: str) -> tuple[str, ...]:
    try:
        scheme, host, port = _split(url.strip())
    except TargetRefused:
        return ("", url.strip())  # as written: a URL kept from before the rule
    parts = urlsplit(url.strip())
    return (scheme, host, str(port), parts.path or "/", parts.query)
