"""The webhook sender: one signed POST to a receiver over httpx, public addresses only.

Which URLs it calls is the rule of `intake.domain.webhook_targets`, the same one
`intake webhook add` applies: checked again at every delivery (a name can be repointed
after it was added); INTAKE_WEBHOOK_ALLOW_PRIVATE=true lifts it.
"""

from __future__ import annotations

import math
import socket
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import anyio
import httpx

from intake.adapters.user_agent import USER_AGENT
from intake.domain.webhook_targets import (
    Resolver,
    TargetRefused,
    TargetUnresolved,
    WebhookTarget,
    address_literal,
    check_target,
    is_public_address,
)
from intake.ports.senders import WebhookResponse

__all__ = [
    "DEFAULT_TIMEOUT",
    "HttpWebhookSender",
    "Resolver",
    "is_public_address",
    "system_resolver",
]

DEFAULT_TIMEOUT = 15.0

# A little of the receiver's answer body is read, so that a short answer lets the
# connection finish cleanly, and a long one is cut off there; it is handed back (a chat
# app may say in it how long to wait), never logged nor kept.
_MAX_READ_BYTES = 4096

# Far beyond any pause the relay honours; it keeps a huge number a finite float.
_MAX_RETRY_AFTER_SECONDS = 10**9


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
        self._resolver: Resolver = resolver or system_resolver

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> WebhookResponse:
        # fail_after bounds the whole exchange, DNS included; httpx.Timeout alone limits
        # each phase, and a receiver trickling its answer could hold the relay forever.
        try:
            with anyio.fail_after(self._timeout):
                request = await self._request(url, headers, body)
                return await self._post(request)
        except TargetRefused as exc:
            return WebhookResponse(status=None, error=f"refused: {exc}")
        except TargetUnresolved as exc:
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
        checked = await check_target(url, allow_private=self._allow_private, resolve=self._resolver)
        try:
            target = httpx.URL(url)
        except httpx.InvalidURL:
            raise TargetRefused("not a valid URL") from None
        if not target.host:
            raise TargetRefused("not an absolute http(s) URL")
        request_headers = httpx.Headers(headers)
        request_headers["User-Agent"] = USER_AGENT
        extensions: dict[str, object] = {}
        if checked.addresses:
            target, pinned_headers, extensions = _pinned(target, checked)
            request_headers.update(pinned_headers)  # case-insensitive: replaces any Host
        return self._client.build_request(
            "POST",
            target,
            headers=request_headers,
            content=body,
            timeout=httpx.Timeout(self._timeout),
            extensions=extensions,
        )

    async def _post(self, request: httpx.Request) -> WebhookResponse:
        # follow_redirects=False: a redirect could lead anywhere, a private address
        # included, and would carry the signed body with it. It counts as a failure.
        response = await self._client.send(request, stream=True, follow_redirects=False)
        try:
            # Raw bytes: decoding a compressed answer could blow a small read up into
            # a large one. (A transport that answered from memory has nothing to read.)
            read = bytearray()
            if not response.is_stream_consumed:
                async for chunk in response.aiter_raw():
                    read += chunk
                    if len(read) >= _MAX_READ_BYTES:
                        break
        finally:
            await response.aclose()
        status = response.status_code
        retry_after = parse_retry_after(response.headers.get("Retry-After"), datetime.now(UTC))
        error = "redirect not followed" if 300 <= status < 400 else None
        return WebhookResponse(
            status=status, retry_after=retry_after, error=error, body=bytes(read[:_MAX_READ_BYTES])
        )


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


def _pinned(
    target: httpx.URL, checked: WebhookTarget
) -> tuple[httpx.URL, dict[str, str], dict[str, object]]:
    """The URL rewritten to the checked address, with what keeps TLS and the receiver's
    virtual hosting on the original name.

    Resolving for the check and letting httpx resolve again on connect would leave a gap
    (DNS rebinding: a short-lived answer that is public for the check and private for
    the connection), so the connection goes to the very address checked. The
    certificate is still verified against the name (the `sni_hostname` extension sets
    TLS's server_hostname), and `Connection: close` keeps a connection opened for one
    name from being pooled and reused for another name on the same address.
    """
    address = str(checked.addresses[0])
    pinned = target.copy_with(host=address)
    if address_literal(checked.host) is not None:
        return pinned, {}, {}  # an address: no name to keep
    host = target.raw_host.decode("ascii")  # IDNA-encoded, as DNS and TLS see it
    host_header = host if target.port is None else f"{host}:{target.port}"
    return pinned, {"Host": host_header, "Connection": "close"}, {"sni_hostname": host}


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]
