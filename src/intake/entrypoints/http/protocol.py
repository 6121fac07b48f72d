"""The HTTP/1.1 protocol `intake serve` speaks on h11 (INTAKE_HTTP_PROTOCOL=h11):
uvicorn's h11 protocol with the deadlines, head limit and refusals of protocol_rules.py.

h11 checks its size limit only on a head still incomplete, so a head that arrived whole
in one read passed at any size: the limit is kept here on every head, however it arrives.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from intake.entrypoints.http.protocol_rules import (
    HEAD_LIMIT,
    Awaiting,
    ClientDeadline,
    malformed_request,
    no_delay,
)


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


class IntakeH11Protocol(H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _HeadLimitedConnection(h11.SERVER, max_incomplete_event_size=HEAD_LIMIT)
        self._deadline: ClientDeadline | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        no_delay(transport)
        self._deadline = ClientDeadline(self.loop, transport)
        super().connection_made(transport)
        self._follow()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's plain-text 400 for what h11 cannot parse, as the envelope."""
        headers, body = malformed_request()
        event = h11.Response(status_code=400, headers=headers, reason=b"Bad Request")
        self.transport.write(self.conn.send(event) or b"")
        self.transport.write(self.conn.send(h11.Data(data=body)) or b"")
        self.transport.write(self.conn.send(h11.EndOfMessage()) or b"")
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)

    def _follow(self) -> None:
        if self._deadline is None:
            return
        theirs, ours = self.conn.their_state, self.conn.our_state
        awaiting = None
        if theirs is h11.IDLE:
            awaiting = Awaiting.HEADERS
        elif theirs is h11.SEND_BODY and ours is h11.DONE:
            awaiting = Awaiting.REFUSED_BODY
        self._deadline.follow(awaiting)
