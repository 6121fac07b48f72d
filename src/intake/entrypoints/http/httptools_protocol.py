"""The HTTP/1.1 protocol `intake serve` speaks by default (INTAKE_HTTP_PROTOCOL=httptools):
uvicorn's httptools protocol with the deadlines, head limit and refusals of
protocol_rules.py.

httptools keeps no limit on a head: it holds a header's value until the value ends, at
any length. The head is measured here as it is parsed, in bytes received: every read
that is all head (the head began before it and has not ended) counts whole, and the read
a head ends in counts up to the blank line that ends it (httptools takes only CRLF line
ends). A head over HEAD_LIMIT is refused; one that never ends, within a read of the
limit. Only a head that begins in the read a previous request ended in (pipelining) is
measured, in that read, by what the parser hands over: its request line and header lines
less the whitespace the parser skips (the space after each colon among it), a little
short of its size; what follows in later reads counts whole.

A refused request that follows others arrived whole on the same connection (pipelining)
is refused after their answers, as h11 does: the client learns what became of each.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from intake.entrypoints.http.protocol_rules import (
    HEAD_LIMIT,
    Awaiting,
    ClientDeadline,
    malformed_request,
    no_delay,
)

# The request line's bytes besides the method, the target and the version's number:
# two spaces, "HTTP/" and its line end; and the blank line that ends the head.
_FRAMING = 2 + len("HTTP/") + 2 + 2


class _WritesTogether:
    """The connection's transport, sending what is written in one turn of the event loop
    in one write: uvicorn writes an answer's head and its body apart, which is two
    system calls and, with TCP_NODELAY, two packets. Closing sends what waits first."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._waiting: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._waiting:
            self._loop.call_soon(self._send)
        self._waiting.append(data)

    def _send(self) -> None:
        if self._waiting:
            data = b"".join(self._waiting)
            self._waiting.clear()
            # A connection closed meanwhile (a deadline, the client) takes nothing more.
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self._send()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class HeadTooLongError(Exception):
    """Raised from a parser callback: httptools stops and reports a parser error, which
    uvicorn answers with send_400_response."""


class IntakeHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: ClientDeadline | None = None
        self._in_head = False  # a request has begun and its head has not ended
        self._body_open = False  # a head has ended and its body has not
        self._head_size = 0  # the head's bytes the parser has handed over
        # The head's bytes in the reads before this one: all of them, or as many as are
        # known to be head when it began within a read after an earlier request.
        self._head_reads = 0
        self._read = b""  # the read being parsed
        self._carry = b""  # the end of the previous read: the head's end may straddle it
        self._begun_in_read = False  # a request began in this read
        self._ended_in_read = False  # a request ended in this read
        self._refusal_due = False  # a refusal waits for the answers to requests before it

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        no_delay(transport)
        self._deadline = ClientDeadline(self.loop, transport)
        super().connection_made(cast(asyncio.Transport, _WritesTogether(transport, self.loop)))
        self._follow()

    def data_received(self, data: bytes) -> None:
        self._read = data
        self._begun_in_read = self._ended_in_read = False
        super().data_received(data)
        self._read = b""
        if self._in_head and not self.transport.is_closing():
            self._count_head_read(data)
        self._follow()

    def _count_head_read(self, data: bytes) -> None:
        """A read the head has not ended in: all of it is head from where the head began."""
        self._carry = data[-3:]
        if not self._begun_in_read:
            self._head_reads += len(data)
        elif not self._ended_in_read:
            # Nothing of an earlier request came before it in this read, only the blank
            # lines the parser skips before a request line.
            self._head_reads = len(data)
        if self._head_reads > HEAD_LIMIT:
            self.send_400_response("request head too long")

    def _head_received(self) -> int:
        """The bytes of the head just ended, as received: at least, where it began within
        a read after an earlier request (the parser's count then says more)."""
        if self._begun_in_read:
            return 0 if self._ended_in_read else self._read.find(b"\r\n\r\n") + 4
        straddling = self._carry + self._read
        return self._head_reads + straddling.find(b"\r\n\r\n") + 4 - len(self._carry)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = self._begun_in_read = True
        self._head_size = 0
        self._head_reads = 0

    def on_url(self, url: bytes) -> None:
        self._grow_head(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._grow_head(len(name) + len(value) + 3)  # the colon and the line end
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        version = self.parser.get_http_version()
        self._grow_head(len(self.parser.get_method()) + len(version) + _FRAMING)
        if self._head_received() > HEAD_LIMIT:
            raise HeadTooLongError
        self._body_open = True
        super().on_headers_complete()

    def _grow_head(self, size: int) -> None:
        self._head_size += size
        if self._head_size > HEAD_LIMIT:
            raise HeadTooLongError

    def on_message_complete(self) -> None:
        self._body_open = False
        self._ended_in_read = True
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._refusal_due and self.cycle.response_complete:
            self._refuse()
        self._follow()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's plain-text 400 for what httptools cannot parse, as the envelope; after
        the answers to the requests before it that arrived whole."""
        if not self._body_open and self.cycle is not None and not self.cycle.response_complete:
            self._refusal_due = True
            self.flow.pause_reading()
            return
        self._refuse()

    def _refuse(self) -> None:
        if self.transport.is_closing():
            return
        headers, body = malformed_request()
        content = [STATUS_LINE[400]]
        for name, value in headers:
            content += [name, b": ", value, b"\r\n"]
        content += [b"\r\n", body]
        self.transport.write(b"".join(content))
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)

    def _follow(self) -> None:
        if self._deadline is None:
            return
        cycle = self.cycle
        awaiting = None
        if cycle is None or cycle.response_complete:
            awaiting = Awaiting.REFUSED_BODY if self._body_open else Awaiting.HEADERS
        self._deadline.follow(awaiting)
