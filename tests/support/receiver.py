"""A real local webhook receiver: an HTTP server on a free 127.0.0.1 port.

It runs in a background thread, so the webhook sender is tested over a real socket.
Behaviour switches, settable while it runs:

- `statuses`: the answers' status codes, one per request in order (`[500, 500, 200]`:
  fail twice, then succeed); when they run out, `status` (200) answers;
- `delay`: seconds to wait before answering (the sender's timeout tests);
- `retry_after`: a Retry-After header value to send;
- `location`: the Location header sent with a 3xx answer;
- `body`: the answer body (a large one checks the sender does not read it all).

`requests` records what arrived: method, path, headers and body.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any

from attrs import frozen

from tests.support.local_server import LocalHttpServer, QuietServer

# A handler never waits longer than this for a client that stopped sending, so
# `stop()` cannot hang on a half-open connection.
_SOCKET_TIMEOUT = 5.0


@frozen
class ReceivedRequest:
    method: str
    path: str
    headers: Mapping[str, str]  # names in lower case
    body: bytes


class Receiver(LocalHttpServer):
    """A webhook endpoint that records requests and answers as told."""

    thread_name = "webhook-receiver"

    def __init__(self) -> None:
        super().__init__()
        self.status = 200
        self.delay = 0.0
        self.retry_after: str | None = None
        self.location: str | None = None
        self.body = b"ok"
        self._statuses: list[int] = []
        self._requests: list[ReceivedRequest] = []

    # -- addresses -------------------------------------------------------------

    def url(self, path: str = "/hooks/intake") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    # -- behaviour and records -------------------------------------------------

    @property
    def statuses(self) -> list[int]:
        with self._lock:
            return list(self._statuses)

    @statuses.setter
    def statuses(self, codes: Iterable[int]) -> None:
        with self._lock:
            self._statuses = list(codes)

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._requests)

    def _take(self, request: ReceivedRequest) -> int:
        """Records a request and returns the status to answer it with."""
        with self._lock:
            self._requests.append(request)
            return self._statuses.pop(0) if self._statuses else self.status


class _Server(QuietServer):
    owner: Receiver


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = _SOCKET_TIMEOUT

    def do_POST(self) -> None:
        receiver = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in self.headers.items()}
        status = receiver._take(ReceivedRequest(self.command, self.path, headers, body))
        if receiver.delay > 0 and receiver._stopping.wait(receiver.delay):
            return  # stopping: drop the connection rather than answer late
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(receiver.body)))
        self.send_header("Connection", "close")
        if receiver.retry_after is not None:
            self.send_header("Retry-After", receiver.retry_after)
        if receiver.location is not None and 300 <= status < 400:
            self.send_header("Location", receiver.location)
        self.end_headers()
        self.wfile.write(receiver.body)

    # A followed redirect would arrive as a GET (303) or a POST (307): both are recorded.
    do_GET = do_POST  # noqa: N815 - the name BaseHTTPRequestHandler looks up

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: the default writes every request to stderr.
        return


Receiver.handler = _Handler
Receiver.server_class = _Server
