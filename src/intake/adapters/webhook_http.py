"""The webhook sender: one signed POST to a receiver over httpx, public addresses only.

decisions.md "Commit and events": a webhook URL must use https and resolve to public
addresses, checked at delivery time (a name can be repointed after it was added), and
INTAKE_WEBHOOK_ALLOW_PRIVATE=true lifts both checks.
"""

from __future__ import annotations

import ipaddress
import math
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import anyio
import httpx

from intake.ports.senders import WebhookResponse

DEFAULT_TIMEOUT = 15.0

# A resolver maps a host name and port to the IP addresses it would connect to.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# The receiver's answer body is never kept; a little is read so that a short answer
# lets the connection finish cleanly, and a long one is cut off there.
_MAX_READ_BYTES = 4096

# Far beyond any pause the relay honours; it keeps a huge number a finite float.
_MAX_RETRY_AFTER_SECONDS = 10**9

# Not covered by every Python's is_private / is_global: carrier-grade NAT (RFC 6598).
_SHARED_ADDRESS_SPACE = ipaddress.IPv4Network("100.64.0.0/10")
# NAT64: the well-known prefix embeds an IPv4 address, which is what gets reached
# (RFC 6052); the local-use prefix points into the operator's own network (RFC 8215).
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")


class _RefusedError(Exception):
    """The URL is one the sender will not call; the message says why."""


class _UnreachableError(Exception):
    """No request could be made (no DNS answer); the message says why."""


class HttpWebhookSender:
    """Implements WebhookSender: POSTs once and reports the status, never the body.

    Unless `allow_private`, the URL must be https and every address its host resolves
    to must be public; the request then goes to the checked address itself (see
    `_pinned`), so a second DNS answer cannot swap in a private one.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        allow_private: bool = False,
        resolver: Resolver | None = None,
    ) -> None:
        if not (math.isfinite(timeout) and timeout > 0):
            raise ValueError("timeout must be a positive number of seconds")
        self._client = client
        self._timeout = timeout
        self._allow_private = allow_private
        self._resolver: Resolver = resolver or _system_resolver

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> WebhookResponse:
        # fail_after bounds the whole exchange, DNS included; httpx.Timeout alone limits
        # each phase, and a receiver trickling its answer could hold the relay forever.
        try:
            with anyio.fail_after(self._timeout):
                request = await self._request(url, headers, body)
                return await self._post(request)
        except _RefusedError as exc:
            return WebhookResponse(status=None, error=f"refused: {exc}")
        except _UnreachableError as exc:
            return WebhookResponse(status=None, error=str(exc))
        except TimeoutError:
            return WebhookResponse(status=None, error="timed out")
        except httpx.TimeoutException as exc:
            return WebhookResponse(status=None, error=f"timed out ({type(exc).__name__})")
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            # The exception's message may quote the URL (a token in its query); the
            # type name is enough to tell a refused connection from a TLS failure.
            return WebhookResponse(status=None, error=f"request failed ({type(exc).__name__})")
        except OSError as exc:
            return WebhookResponse(status=None, error=f"request failed ({type(exc).__name__})")

    async def _request(self, url: str, headers: Mapping[str, str], body: bytes) -> httpx.Request:
        try:
            target = httpx.URL(url)
        except httpx.InvalidURL:
            raise _RefusedError("not a valid URL") from None
        if target.scheme not in ("http", "https") or not target.host:
            raise _RefusedError("not an http(s) URL")
        request_headers = httpx.Headers(headers)
        extensions: dict[str, object] = {}
        if not self._allow_private:
            if target.scheme != "https":
                raise _RefusedError("webhook URLs must use https")
            target, pinned_headers, extensions = await self._pinned(target)
            request_headers.update(pinned_headers)  # case-insensitive: replaces any Host
        return self._client.build_request(
            "POST",
            target,
            headers=request_headers,
            content=body,
            timeout=httpx.Timeout(self._timeout),
            extensions=extensions,
        )

    async def _pinned(
        self, target: httpx.URL
    ) -> tuple[httpx.URL, dict[str, str], dict[str, object]]:
        """The URL rewritten to a checked public address, with what keeps TLS and the
        receiver's virtual hosting on the original name.

        Resolving here and letting httpx resolve again on connect leaves a gap (DNS
        rebinding: a short-lived answer that is public for the check and private for
        the connection), so the connection goes to the very address checked. The
        certificate is still verified against the name (the `sni_hostname` extension
        sets TLS's server_hostname), and `Connection: close` keeps a connection opened
        for one name from being pooled and reused for another name on the same address.
        """
        literal = _ip_literal(target.host)
        if literal is not None:
            _check_public(literal, target.host)
            return target, {}, {}
        host = target.raw_host.decode("ascii")  # IDNA-encoded, as DNS and TLS see it
        port = target.port or 443
        try:
            answers = await self._resolver(host, port)
        except OSError as exc:  # socket.gaierror: no such name, or no DNS just now
            raise _UnreachableError(f"DNS lookup failed ({type(exc).__name__})") from exc
        addresses = [ipaddress.ip_address(answer.split("%", 1)[0]) for answer in answers]
        if not addresses:
            raise _UnreachableError("DNS lookup returned no addresses")
        # Every address must pass, not only the one used: a name that resolves to a
        # public and a private address is a probe of the private one.
        for address in addresses:
            _check_public(address, host)
        host_header = host if target.port is None else f"{host}:{target.port}"
        headers = {"Host": host_header, "Connection": "close"}
        return target.copy_with(host=str(addresses[0])), headers, {"sni_hostname": host}

    async def _post(self, request: httpx.Request) -> WebhookResponse:
        # follow_redirects=False: a redirect could lead anywhere, a private address
        # included, and would carry the signed body with it. It counts as a failure.
        response = await self._client.send(request, stream=True, follow_redirects=False)
        try:
            # Raw bytes: decoding a compressed answer could blow a small read up into
            # a large one. (A transport that answered from memory has nothing to read.)
            read = 0
            if not response.is_stream_consumed:
                async for chunk in response.aiter_raw():
                    read += len(chunk)
                    if read >= _MAX_READ_BYTES:
                        break
        finally:
            await response.aclose()
        status = response.status_code
        retry_after = parse_retry_after(response.headers.get("Retry-After"), datetime.now(UTC))
        error = "redirect not followed" if 300 <= status < 400 else None
        return WebhookResponse(status=status, retry_after=retry_after, error=error)


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Retry-After as seconds from `now`: delay-seconds or an HTTP date (RFC 9110 10.2.3).

    None when absent or unreadable; a date in the past is 0."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(min(int(text), _MAX_RETRY_AFTER_SECONDS))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" in a date: UTC, by RFC 5322
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


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


def _check_public(address: IPAddress, host: str) -> None:
    if not is_public_address(address):
        if str(address) == host:
            raise _RefusedError(f"{address} is not a public address")
        raise _RefusedError(f"{host} resolves to {address}, not a public address")


def _ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


async def _system_resolver(host: str, port: int) -> list[str]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]
