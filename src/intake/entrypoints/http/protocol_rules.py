"""What `intake serve` keeps on a connection beside uvicorn, whichever parser reads the
requests (protocol.py: h11; httptools_protocol.py: httptools). Each protocol says what
the connection waits for from its client; the rules are here, once.

- A request's headers must arrive within INTAKE_BODY_TIMEOUT of the connection opening,
  or of the previous answer on a kept-alive connection. A client sending its headers a
  byte at a time would otherwise hold its connection for as long as it likes.
- A request answered before its body ended (a 413, a slow sender's 400, any refusal
  made before the body is read) has LINGER seconds after the answer to finish sending.
  What arrives meanwhile is read and thrown away, so that the client gets to read the
  answer rather than a reset; a client that finishes keeps its connection. Then the
  connection is closed: a body that never ends would otherwise be taken in for as long
  as the sender cares to send it.
- A request head (request line, header lines, blank line) over HEAD_LIMIT, or a request
  too garbled to parse, is refused before the app sees it, in the spec's envelope: a
  400 malformed_request with its request id, and the connection closed.
- Every connection gets TCP_NODELAY. asyncio sets it only on sockets made for TCP by
  name (IPPROTO_TCP); the listening socket uvicorn binds for several workers is made
  with protocol 0, and connections accepted on it inherit that, so asyncio skips them.
  Without it a kept-alive request waits on Nagle's algorithm (some 40 ms on Linux).
"""

from __future__ import annotations

import asyncio
import enum
import functools
import socket

from intake.config import Settings
from intake.domain.errors import ErrorCode, Rejection
from intake.entrypoints.http.middleware import new_request_id
from intake.entrypoints.http.rendering import error_response

LINGER = 2.0  # seconds a refused body may go on arriving after the answer
HEAD_LIMIT = 16 * 1024  # bytes of a request head: request line, header lines, blank line


@functools.cache
def _header_timeout() -> float:
    # Read once per process, as the app reads its settings; `intake serve` has already
    # refused settings it cannot use before any worker starts.
    return Settings.from_env().body_timeout


class Awaiting(enum.Enum):
    """What a connection waits for from its client, when a deadline applies."""

    HEADERS = enum.auto()  # the next request's head
    REFUSED_BODY = enum.auto()  # the rest of a body already answered


class ClientDeadline:
    """The one deadline a connection keeps on its client. The clock starts when what
    the connection waits for changes, not with every byte that comes in; None means the
    app has the request, and its own body timeout applies."""

    __slots__ = ("_awaiting", "_loop", "_timer", "_transport")

    def __init__(self, loop: asyncio.AbstractEventLoop, transport: asyncio.BaseTransport) -> None:
        self._loop = loop
        self._transport = transport
        self._awaiting: Awaiting | None = None
        self._timer: asyncio.TimerHandle | None = None

    def follow(self, awaiting: Awaiting | None) -> None:
        if self._transport.is_closing():
            self.cancel()
            return
        if awaiting is self._awaiting:
            return
        self.cancel()
        self._awaiting = awaiting
        if awaiting is not None:
            seconds = _header_timeout() if awaiting is Awaiting.HEADERS else LINGER
            self._timer = self._loop.call_later(seconds, self._expire)

    def cancel(self) -> None:
        self._awaiting = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        self._timer = None
        if not self._transport.is_closing():
            self._transport.close()


def no_delay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def malformed_request() -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The headers and body of the answer to a request the parser refuses: the envelope,
    with a request id of its own, closing the connection. The parser's message is not
    echoed (it may quote the request)."""
    request_id = new_request_id()
    response = error_response(Rejection(ErrorCode.MALFORMED_REQUEST), request_id)
    headers = [
        *((name, value) for name, value in response.raw_headers if name != b"connection"),
        (b"x-request-id", request_id.encode("ascii")),
        (b"connection", b"close"),
    ]
    return headers, bytes(response.body)
