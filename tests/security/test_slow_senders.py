"""Slow senders and bodies that never end, against a real `intake serve` over raw sockets.

- A body trickling in a byte at a time is answered 400 malformed_request once
  INTAKE_BODY_TIMEOUT has passed, and the connection is closed.
- A body that never ends, at full speed, is answered 413 once it passes its limit
  (INTAKE_MAX_BODY_BYTES; a multipart body its own), and the connection is closed: the
  server does not go on taking it in.
- A declared Content-Length over the limit is answered 413 before any body byte is sent.
- A request head (request line and headers) over 16 KiB is refused in the envelope,
  whether it arrives in one packet or in many; one of exactly 16 KiB is served.
- Fifty slow senders, or fifty clients sending their headers slowly, do not keep a
  normal submission waiting.
- Streaming some 200 MB of endless bodies leaves the server's memory where it was.

Each on both HTTP protocols `intake serve` speaks: httptools (the default) and h11.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from attrs import define

from intake.domain.limits import PayloadLimits
from tests.security.served import Served, serve

pytestmark = pytest.mark.slow

BODY_TIMEOUT = 1.0  # short: many tests here wait it out, some twice
SLACK = 4.0  # on top of a deadline, for a busy machine
CLOSE_DEADLINE = 5.0  # seconds for the server to close a connection it refused
OPEN_LIMITS = {
    # Every request here comes from 127.0.0.1 to one form: the limiter is not under test.
    "INTAKE_RATE_LIMIT_PUBLIC_BURST": "1000000/30",
    "INTAKE_RATE_LIMIT_PUBLIC_SUSTAINED": "1000000/600",
    "INTAKE_RATE_LIMIT_PUBLIC_FORM": "1000000/600",
}
LIMITS = PayloadLimits()
FORM_TYPE = "application/x-www-form-urlencoded"
JSON_TYPE = "application/json"
BOUNDARY = "XyZ"
MULTIPART_TYPE = f"multipart/form-data; boundary={BOUNDARY}"
FILE_PART = (
    f"--{BOUNDARY}\r\n"
    'Content-Disposition: form-data; name="upload"; filename="endless.bin"\r\n'
    "Content-Type: application/octet-stream\r\n\r\n"
).encode()


# Every attack, on each HTTP protocol `intake serve` can speak (INTAKE_HTTP_PROTOCOL):
# the deadlines and the head limit are kept by the protocol, beside its parser.
PROTOCOLS = ["httptools", "h11"]


@pytest.fixture(scope="module", params=PROTOCOLS)
def quick(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """A server that gives a body a second to arrive."""
    directory = tmp_path_factory.mktemp("quick")
    with serve(
        directory,
        INTAKE_BODY_TIMEOUT=str(BODY_TIMEOUT),
        INTAKE_HTTP_PROTOCOL=request.param,
        **OPEN_LIMITS,
    ) as served:
        yield served


@pytest.fixture(scope="module", params=PROTOCOLS)
def patient(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """A server with the default body timeout (30 s): slow senders stay connected."""
    directory = tmp_path_factory.mktemp("patient")
    with serve(directory, INTAKE_HTTP_PROTOCOL=request.param, **OPEN_LIMITS) as served:
        yield served


# -- raw HTTP/1.1 over asyncio streams ---------------------------------------------------------


@define
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    at: float  # seconds from the request's start


@define
class Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    started: float

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def answer(self) -> Answer:
        head = await self.reader.readuntil(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        body = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return Answer(int(status_line.split()[1]), headers, body, time.monotonic() - self.started)

    async def closed_by_server(self, within: float, trickle: bytes | None = None) -> bool:
        """Whether the server closes the connection within the time, while this side
        goes on sending `trickle` (a chunk at a time, as fast as it is taken)."""
        deadline = time.monotonic() + within
        eof = asyncio.ensure_future(self.reader.read(1))
        try:
            while time.monotonic() < deadline and not eof.done():
                if trickle is not None:
                    with contextlib.suppress(ConnectionError):
                        await asyncio.wait_for(self.send(trickle), deadline - time.monotonic())
                await asyncio.wait({eof}, timeout=0.05)
            if not eof.done():
                return False
            try:
                return eof.result() == b""
            except ConnectionError:
                return True  # reset: closed all the same
        except TimeoutError:
            return False
        finally:
            eof.cancel()

    def close(self) -> None:
        self.writer.close()


async def connect(port: int, head: str) -> Connection:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    connection = Connection(reader, writer, time.monotonic())
    await connection.send(head.encode("latin-1"))
    return connection


def request_head(path: str, content_type: str, *, length: int | None = None) -> str:
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
        f"Accept: application/json\r\n{framing}\r\n\r\n"
    )


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@define
class Flood:
    answer: Answer
    sent: int  # body bytes written before the answer came
    closed: bool


async def flood(port: int, path: str, content_type: str, first: bytes = b"") -> Flood:
    """A chunked body that never ends, sent as fast as the server takes it, until the
    server answers; then whether the server closes the connection."""
    connection = await connect(port, request_head(path, content_type))
    piece = chunk(b"x" * 65_536)
    sent = 0
    try:
        answer = asyncio.ensure_future(connection.answer())
        if first:
            await connection.send(chunk(first))
        with contextlib.suppress(ConnectionError):
            while not answer.done():
                await connection.send(piece)
                sent += 65_536
        result = await asyncio.wait_for(answer, CLOSE_DEADLINE)
        closed = await connection.closed_by_server(CLOSE_DEADLINE, trickle=piece)
        return Flood(result, sent, closed)
    finally:
        connection.close()


def _path(served: Served) -> str:
    return f"/f/{served.form()['public_form_key']}"


# -- a body trickling in -----------------------------------------------------------------------


def test_a_sender_trickling_a_byte_a_second_is_cut_off_after_the_body_timeout(
    quick: Served,
) -> None:
    path = _path(quick)

    async def trickle() -> tuple[Answer, bool]:
        connection = await connect(quick.port, request_head(path, JSON_TYPE, length=1000))
        try:
            answer = asyncio.ensure_future(connection.answer())
            while not answer.done():
                await connection.send(b" ")
                await asyncio.wait({answer}, timeout=1.0)
            closed = await connection.closed_by_server(CLOSE_DEADLINE, trickle=b" ")
            return answer.result(), closed
        finally:
            connection.close()

    answer, closed = asyncio.run(trickle())

    assert answer.status == 400
    assert b'"malformed_request"' in answer.body
    assert BODY_TIMEOUT - 0.5 <= answer.at <= BODY_TIMEOUT + SLACK
    assert closed, "the server kept reading a body it had refused"


def test_a_sender_that_stalls_mid_body_is_answered_and_dropped(quick: Served) -> None:
    path = _path(quick)

    async def stall() -> tuple[Answer, bool]:
        connection = await connect(quick.port, request_head(path, FORM_TYPE, length=1000))
        try:
            await connection.send(b"name=Ada&message=")
            answer = await asyncio.wait_for(connection.answer(), BODY_TIMEOUT + SLACK)
            return answer, await connection.closed_by_server(CLOSE_DEADLINE)
        finally:
            connection.close()

    answer, closed = asyncio.run(stall())

    assert answer.status == 400
    assert b'"malformed_request"' in answer.body
    assert closed


# -- a body that never ends --------------------------------------------------------------------


@pytest.mark.parametrize("content_type", [FORM_TYPE, JSON_TYPE])
def test_an_endless_body_at_full_speed_is_cut_off_at_the_limit_with_413(
    quick: Served, content_type: str
) -> None:
    result = asyncio.run(flood(quick.port, _path(quick), content_type))

    assert result.answer.status == 413
    assert b'"payload_too_large"' in result.answer.body
    assert result.sent >= LIMITS.max_body - 65_536  # it read up to the limit first
    assert result.closed, "the server kept reading a body it had refused"


def test_an_endless_multipart_file_part_is_cut_off_at_the_multipart_limit(quick: Served) -> None:
    result = asyncio.run(flood(quick.port, _path(quick), MULTIPART_TYPE, first=FILE_PART))

    assert result.answer.status == 413
    assert b'"payload_too_large"' in result.answer.body
    assert result.sent >= LIMITS.max_multipart_body - 65_536
    assert result.closed


@pytest.mark.parametrize(
    ("content_type", "declared"),
    [
        (FORM_TYPE, LIMITS.max_body + 1),
        (JSON_TYPE, 10**12),
        (MULTIPART_TYPE, LIMITS.max_multipart_body + 1),
    ],
)
def test_a_declared_length_over_the_limit_is_refused_before_any_body_byte(
    quick: Served, content_type: str, declared: int
) -> None:
    path = _path(quick)

    async def declare() -> tuple[Answer, bool]:
        connection = await connect(quick.port, request_head(path, content_type, length=declared))
        try:
            answer = await asyncio.wait_for(connection.answer(), SLACK)
            return answer, await connection.closed_by_server(CLOSE_DEADLINE)
        finally:
            connection.close()

    answer, closed = asyncio.run(declare())

    assert answer.status == 413
    assert b'"payload_too_large"' in answer.body
    assert answer.at < SLACK
    assert closed


def test_a_body_just_over_the_limit_from_an_ordinary_client_still_gets_the_413(
    quick: Served,
) -> None:
    # The connection is closed after the answer, yet a client that sends its whole body
    # before reading, as most do, still reads the 413 rather than a reset.
    url = quick.base + _path(quick)
    body = b"message=" + b"x" * (LIMITS.max_body + 50_000)
    with httpx.Client(timeout=10.0) as client:
        declared = client.post(url, content=body, headers={"content-type": FORM_TYPE})
        streamed = client.post(
            url,
            content=(body[i : i + 65_536] for i in range(0, len(body), 65_536)),
            headers={"content-type": FORM_TYPE},
        )
        after = client.post(url, json={"name": "Ada"})

    for response in (declared, streamed):
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "payload_too_large"
    assert after.status_code == 201  # and the client goes on over a new connection


# -- headers that never end, and what follows a refusal ------------------------------------------


def test_a_connection_that_sends_nothing_is_closed_after_the_timeout(quick: Served) -> None:
    async def idle() -> tuple[bool, float]:
        reader, writer = await asyncio.open_connection("127.0.0.1", quick.port)
        connection = Connection(reader, writer, time.monotonic())
        try:
            closed = await connection.closed_by_server(BODY_TIMEOUT + SLACK)
            return closed, time.monotonic() - connection.started
        finally:
            connection.close()

    closed, took = asyncio.run(idle())

    assert closed
    assert took >= BODY_TIMEOUT - 0.5


def test_headers_trickling_in_forever_are_cut_off_after_the_timeout(quick: Served) -> None:
    path = _path(quick)

    async def slowloris() -> tuple[bool, float]:
        connection = await connect(quick.port, f"POST {path} HTTP/1.1\r\nHost: x\r\n")
        try:
            closed = await connection.closed_by_server(BODY_TIMEOUT + SLACK, trickle=b"X-a: b\r\n")
            return closed, time.monotonic() - connection.started
        finally:
            connection.close()

    closed, took = asyncio.run(slowloris())

    assert closed, "a client sending headers slowly held its connection"
    assert took >= BODY_TIMEOUT - 0.5


def test_a_client_that_finishes_a_refused_body_keeps_its_connection(quick: Served) -> None:
    path = _path(quick)
    declared = LIMITS.max_body + 1

    async def refused_then_reused() -> tuple[Answer, Answer]:
        connection = await connect(quick.port, request_head(path, FORM_TYPE, length=declared))
        try:
            first = await asyncio.wait_for(connection.answer(), SLACK)
            await connection.send(b"x" * declared)  # the body it had announced
            body = b"name=Ada"
            await connection.send(request_head(path, FORM_TYPE, length=len(body)).encode() + body)
            second = await asyncio.wait_for(connection.answer(), SLACK)
            return first, second
        finally:
            connection.close()

    first, second = asyncio.run(refused_then_reused())

    assert first.status == 413
    assert second.status == 201


# -- many slow clients at once -----------------------------------------------------------------

CROWD = 50


@contextlib.asynccontextmanager
async def crowd(port: int, head: str, drip: bytes, every: float) -> AsyncIterator[list[Connection]]:
    """CROWD connections that send `head`, then `drip` every so often, until closed."""
    connections = [await connect(port, head) for _ in range(CROWD)]

    async def drip_all() -> None:
        while True:
            for connection in connections:
                with contextlib.suppress(ConnectionError):
                    await connection.send(drip)
            await asyncio.sleep(every)

    dripping = asyncio.ensure_future(drip_all())
    try:
        yield connections
    finally:
        dripping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await dripping
        for connection in connections:
            connection.close()


async def _normal_submission(served: Served, path: str) -> tuple[int, float]:
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=30.0) as client:
        response = await client.post(served.base + path, json={"name": "Ada", "message": "Hi"})
    return response.status_code, time.monotonic() - started


NORMAL_DEADLINE = 5.0  # generous: alone, a submission takes milliseconds


def test_fifty_slow_senders_do_not_keep_a_normal_submission_waiting(patient: Served) -> None:
    path = _path(patient)

    async def scenario() -> tuple[int, float, list[bool]]:
        head = request_head(path, JSON_TYPE, length=100_000)
        async with crowd(patient.port, head, b" ", every=0.5) as slow:
            answers = [asyncio.ensure_future(c.answer()) for c in slow]
            await asyncio.sleep(0.5)  # every one of them is in the middle of its body
            status, took = await _normal_submission(patient, path)
            answered = [a.done() for a in answers]
            for a in answers:
                a.cancel()
        return status, took, answered

    status, took, answered = asyncio.run(scenario())

    assert status == 201
    assert took < NORMAL_DEADLINE
    # Still connected and unanswered: the submission went past them, not after them.
    assert not any(answered)


def test_fifty_clients_sending_headers_slowly_do_not_keep_a_normal_submission_waiting(
    patient: Served,
) -> None:
    path = _path(patient)

    async def scenario() -> tuple[int, float]:
        partial = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        async with crowd(patient.port, partial, b"X-Slow: a\r\n", every=0.5):
            await asyncio.sleep(0.5)
            return await _normal_submission(patient, path)

    status, took = asyncio.run(scenario())

    assert status == 201
    assert took < NORMAL_DEADLINE


def test_headers_past_the_servers_header_limit_are_refused_and_the_connection_closed(
    patient: Served,
) -> None:
    path = _path(patient)

    async def endless_headers() -> tuple[int | None, bool]:
        connection = await connect(patient.port, f"POST {path} HTTP/1.1\r\nHost: x\r\n")
        try:
            answer = asyncio.ensure_future(connection.answer())
            with contextlib.suppress(ConnectionError):
                for i in range(10_000):
                    if answer.done():
                        break
                    await connection.send(f"X-Pad-{i}: {'a' * 100}\r\n".encode())
            try:
                status: int | None = (await asyncio.wait_for(answer, SLACK)).status
            except ConnectionError:
                status = None  # the server's 400 was overtaken by its reset
            return status, await connection.closed_by_server(CLOSE_DEADLINE)
        finally:
            connection.close()

    status, closed = asyncio.run(endless_headers())

    # Refused by the HTTP parser before the app sees a request (the envelope: below).
    assert status in (400, None)
    assert closed


# No blank line after the padding: the parser gives up on headers still growing past its limit.
ENDLESS_HEAD = b"POST /f/x HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 70_000 + b"\r\n"


@pytest.mark.parametrize(
    "request_bytes",
    [
        pytest.param(ENDLESS_HEAD, id="headers-over-the-limit"),
        pytest.param(b"NOT AN HTTP REQUEST\r\n\r\n", id="garbled-request-line"),
        pytest.param(b"POST /f/x HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", id="bad-header"),
    ],
)
def test_a_request_the_http_parser_refuses_is_answered_in_the_envelope(
    quick: Served, request_bytes: bytes
) -> None:
    with socket.create_connection(("127.0.0.1", quick.port), timeout=SLACK) as sock:
        sock.sendall(request_bytes)
        received = bytearray()
        with contextlib.suppress(ConnectionError):
            while chunk := sock.recv(65536):
                received += chunk
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}

    assert status_line.startswith("HTTP/1.1 400 ")
    assert headers["content-type"] == "application/json"
    assert headers["x-request-id"].startswith("req_")
    document = json.loads(body)
    assert document["ok"] is False
    assert document["error"]["code"] == "malformed_request"
    assert document["request_id"] == headers["x-request-id"]


def test_requests_before_a_refused_one_on_the_same_connection_are_answered_first(
    quick: Served,
) -> None:
    # Pipelined: two health checks and a garbled request in one write. The client learns
    # what became of each request it sent, then reads the refusal in the envelope.
    health = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection(("127.0.0.1", quick.port), timeout=SLACK) as sock:
        sock.sendall(health + health + b"NOT AN HTTP REQUEST\r\n\r\n")
        received = bytearray()
        with contextlib.suppress(ConnectionError):
            while data := sock.recv(65536):
                received += data

    statuses = [int(s) for s in re.findall(rb"HTTP/1\.1 (\d{3}) ", bytes(received))]
    assert statuses == [200, 200, 400]
    assert json.loads(bytes(received).rpartition(b"\r\n\r\n")[2])["error"]["code"] == (
        "malformed_request"
    )


HEAD_LIMIT = 16 * 1024  # bytes of request line, header lines and the blank line ending them
PIECE = 512  # bytes a head sent "in pieces" is written at a time


def _head_of(size: int, filler: bytes) -> bytes:
    """A request for the health check whose head is `size` bytes, padded in one header
    with `filler`: the value's bytes, or the whitespace before it that parsers skip."""
    start = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad:"
    end = b"a\r\n\r\n"
    return start + filler * (size - len(start) - len(end)) + end


def _exchange(port: int, request_bytes: bytes, *, in_pieces: bool) -> tuple[int, bytes]:
    """Sends the request in one write, or PIECE bytes a write with a pause between so that
    the server reads it in many; returns the answer's status and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=SLACK) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with contextlib.suppress(ConnectionError):
            if in_pieces:
                for start in range(0, len(request_bytes), PIECE):
                    sock.sendall(request_bytes[start : start + PIECE])
                    time.sleep(0.002)  # pacing only: each piece its own read
            else:
                sock.sendall(request_bytes)
        received = bytearray()
        with contextlib.suppress(ConnectionError):
            while data := sock.recv(65536):
                received += data
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.parametrize("filler", [b"a", b" "], ids=["value", "whitespace"])
@pytest.mark.parametrize("in_pieces", [False, True], ids=["one-packet", "many-packets"])
@pytest.mark.parametrize(
    ("size", "status"),
    [
        pytest.param(HEAD_LIMIT, 200, id="at-the-limit"),
        pytest.param(HEAD_LIMIT + 1, 400, id="one-byte-over"),
        pytest.param(60_000, 400, id="60-KB"),
    ],
)
def test_the_header_limit_holds_however_the_head_arrives(
    quick: Served, size: int, status: int, in_pieces: bool, filler: bytes
) -> None:
    answered, body = _exchange(quick.port, _head_of(size, filler), in_pieces=in_pieces)

    assert answered == status
    if status == 400:
        assert json.loads(body)["error"]["code"] == "malformed_request"


# -- memory ------------------------------------------------------------------------------------

STREAMED_BYTES = 200 * 1024 * 1024
RSS_GROWTH_LIMIT = 40 * 1024 * 1024


def test_memory_stays_flat_while_endless_bodies_stream_in(patient: Served) -> None:
    path = _path(patient)

    async def stream(total: int, parallel: int) -> int:
        sent = 0
        while sent < total:
            floods = [
                *(flood(patient.port, path, MULTIPART_TYPE, first=FILE_PART) for _ in range(2)),
                *(flood(patient.port, path, kind) for kind in (FORM_TYPE, JSON_TYPE) * 4),
            ][:parallel]
            for result in await asyncio.gather(*floods):
                assert result.answer.status == 413
                assert result.closed
                sent += result.sent
        return sent

    asyncio.run(stream(30 * 1024 * 1024, parallel=10))  # warm up: allocator, code paths
    before = patient.rss()
    sent = asyncio.run(stream(STREAMED_BYTES, parallel=10))
    after = patient.rss()

    assert sent >= STREAMED_BYTES
    assert after - before < RSS_GROWTH_LIMIT, f"RSS grew {(after - before) / 2**20:.1f} MiB"
