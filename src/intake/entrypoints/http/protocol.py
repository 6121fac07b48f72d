"""The HTTP/1.1 protocol `intake serve` speaks: uvicorn's h11 protocol with the two
deadlines uvicorn does not keep on its own.

- A request's headers must arrive within INTAKE_BODY_TIMEOUT of the connection opening,
  or of the previous answer on a kept-alive connection. A client sending its headers a
  byte at a time would otherwise hold its connection for as long as it likes.
- A request answered before its body ended (a 413, a slow sender's 400, any refusal
  made before the body is read) has LINGER seconds after the answer to finish sending.
  What arrives meanwhile is read and thrown away, so that the client gets to read the
  answer rather than a reset; a client that finishes keeps its connection. Then the
  connection is closed: a body that never ends would otherwise be taken in for as long
  as the sender cares to send it.

A request too garbled for h11 to read (a head over HEAD_LIMIT, a broken request line)
is refused before the app sees it; that answer, too, is the spec's envelope. h11 checks
its size limit only on a head still incomplete, so a head that arrived whole in one read
passed at any size: the limit is kept here on every head, however it arrives.

Every connection gets TCP_NODELAY. asyncio sets it only on sockets made for TCP by
name (IPPROTO_TCP); the listening socket uvicorn binds for several workers is made with
protocol 0, and connections accepted on it inherit that, so asyncio skips them. Without
it a kept-alive request waits on Nagle's algorithm (some 40 ms on Linux).
"""

from __future__ import annotations

import asyncio
import enum
import functools
import socket
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

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


class _Awaiting(enum.Enum):
    HEADERS = enum.auto()
    REFUSED_BODY = enum.auto()


class _HeadLimitedConnection(h11.Connection):
    """h11's server side, with HEAD_LIMIT kept on whole heads as well as incomplete ones."""

    def next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        if self.their_state is not h11.IDLE:
            return super().next_event()
        # A head stays in the buffer until it is complete, and is taken out whole: what
        # the Request event took out of the buffer is the head. (The buffer's length is
        # read directly; the public `trailing_data` would copy it on every read.)
        buffered = len(self._receive_buffer)
        event = super().next_event()
        if isinstance(event, h11.Request) and buffered - len(self._receive_buffer) > HEAD_LIMIT:
            # As h11 does with an error of its own: the peer's side is in error, ours
            # may still send the refusal.
            self._process_error(self.their_role)
            raise h11.RemoteProtocolError("request head too long", error_status_hint=431)
        return event


def _no_delay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class IntakeH11Protocol(H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _HeadLimitedConnection(h11.SERVER, max_incomplete_event_size=HEAD_LIMIT)
        self._awaiting: _Awaiting | None = None
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        _no_delay(transport)
        super().connection_made(transport)
        self._follow()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's plain-text 400 for what h11 cannot parse, as the JSON envelope; the
        parser's message is not echoed (it may quote the request)."""
        request_id = new_request_id()
        response = error_response(Rejection(ErrorCode.MALFORMED_REQUEST), request_id)
        headers = [
            *((name, value) for name, value in response.raw_headers if name != b"connection"),
            (b"x-request-id", request_id.encode("ascii")),
            (b"connection", b"close"),
        ]
        event = h11.Response(status_code=400, headers=headers, reason=b"Bad Request")
        self.transport.write(self.conn.send(event) or b"")
        self.transport.write(self.conn.send(h11.Data(data=bytes(response.body))) or b"")
        self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _follow(self) -> None:
        """Sets the deadline for what the connection now waits for from the client; the
        clock starts when that changes, not with every byte that comes in."""
        if self.transport.is_closing():
            self._cancel()
            return
        theirs, ours = self.conn.their_state, self.conn.our_state
        awaiting = None  # the app has the request, and its own body timeout applies
        if theirs is h11.IDLE:
            awaiting = _Awaiting.HEADERS
        elif theirs is h11.SEND_BODY and ours is h11.DONE:
            awaiting = _Awaiting.REFUSED_BODY
        if awaiting is self._awaiting:
            return
        self._cancel()
        self._awaiting = awaiting
        if awaiting is not None:
            seconds = _header_timeout() if awaiting is _Awaiting.HEADERS else LINGER
            self._deadline = self.loop.call_later(seconds, self._expire)

    def _expire(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def _cancel(self) -> None:
        self._awaiting = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
