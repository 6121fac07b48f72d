"""A real local Akismet: comment-check, submit-spam, submit-ham and verify-key on a free
127.0.0.1 port, answered as Akismet's API documents them, so the adapter is tested over
a real socket and through the `akismet` package as it is.

- comment-check answers `true` (spam) for Akismet's documented test author
  `viagra-test-123` or the address SPAM_EMAIL, `true` with the `discard` pro-tip for
  DISCARD_EMAIL, and `false` (ham) otherwise;
- submit-spam and submit-ham thank the caller;
- a key other than KEY is answered `invalid`.

Fault switches, settable while running: `delay` (seconds before answering), `failures`
(how many of the next requests get a 500), `answer` (this exact body instead of the
normal one). `requests` records what arrived (endpoint and form), in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from tests.support.local_server import LocalHttpServer, QuietServer

KEY = "0123456789ab"
SITE_URL = "https://forms.example.org"
SPAM_EMAIL = "akismet-guaranteed-spam@example.com"
DISCARD_EMAIL = "akismet-discard@example.com"
THANKS = b"Thanks for making the web a better place."
ENDPOINTS = ("comment-check", "submit-spam", "submit-ham", "verify-key")

_SOCKET_TIMEOUT = 5.0


class AkismetRequest:
    """One request as the fake saw it."""

    def __init__(self, endpoint: str, form: Mapping[str, str], path: str) -> None:
        self.endpoint = endpoint
        self.form = dict(form)
        self.path = path

    def __repr__(self) -> str:
        # The form holds the key and what was submitted: only the names are printed.
        return f"AkismetRequest({self.endpoint}, fields={sorted(self.form)})"


class FakeAkismet(LocalHttpServer):
    thread_name = "fake-akismet"

    def __init__(self) -> None:
        super().__init__()
        self.delay = 0.0
        self.failures = 0
        self.answer: bytes | None = None
        self._requests: list[AkismetRequest] = []

    @property
    def requests(self) -> list[AkismetRequest]:
        with self._lock:
            return list(self._requests)

    def received(self, endpoint: str) -> list[AkismetRequest]:
        return [r for r in self.requests if r.endpoint == endpoint]

    def _record(self, request: AkismetRequest) -> bool:
        """Records the request; True when it is to fail (one of `failures`)."""
        with self._lock:
            self._requests.append(request)
            if self.failures > 0:
                self.failures -= 1
                return True
            return False

    def _reply(self, endpoint: str, form: Mapping[str, str]) -> tuple[bytes, dict[str, str]]:
        if self.answer is not None:
            return self.answer, {}
        if endpoint == "verify-key":
            valid = form.get("key") == KEY and form.get("blog") == SITE_URL
            return (b"valid" if valid else b"invalid"), {}
        if form.get("api_key") != KEY:
            return b"invalid", {}
        if endpoint != "comment-check":
            return THANKS, {}
        author, email = form.get("comment_author"), form.get("comment_author_email")
        if email == DISCARD_EMAIL:
            return b"true", {"X-akismet-pro-tip": "discard"}
        if author == "viagra-test-123" or email == SPAM_EMAIL:
            return b"true", {}
        return b"false", {}


class _Server(QuietServer):
    owner: FakeAkismet


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = _SOCKET_TIMEOUT

    def do_POST(self) -> None:
        fake = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        endpoint = self.path.rstrip("/").rsplit("/", 1)[-1]
        if endpoint not in ENDPOINTS or not self.path.startswith("/1.1/"):
            self._send(HTTPStatus.NOT_FOUND, b"not found", {})
            return
        fields = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
        form = {name: values[-1] for name, values in fields.items()}
        fail = fake._record(AkismetRequest(endpoint, form, self.path))
        if fake.delay > 0 and fake._stopping.wait(fake.delay):
            return  # stopping: drop the connection rather than answer late
        if fail:
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, b"oops", {})
            return
        body, headers = fake._reply(endpoint, form)
        self._send(HTTPStatus.OK, body, headers)

    def _send(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


FakeAkismet.handler = _Handler
FakeAkismet.server_class = _Server
