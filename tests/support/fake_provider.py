"""A real local siteverify server for Turnstile, hCaptcha and reCAPTCHA.

It listens on a free 127.0.0.1 port in a background thread, so the HTTP verifier is
tested over a real socket rather than against a mocked client. Cloudflare's
documented test secrets decide the answer on every provider's path:

- `PASS_SECRET` always passes;
- `FAIL_SECRET` always fails with `invalid-input-response`;
- `SPENT_SECRET` fails with `timeout-or-duplicate` (the token was already spent);
- any other secret fails with `invalid-input-secret`.

Fault switches, settable while running: `delay` (seconds before answering),
`status` (an HTTP status override), `garbage` (a non-JSON body) and `body` (this
exact JSON object instead of the normal answer). `requests` records what arrived.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from intake.domain.model import ChallengeProvider
from tests.support.local_server import LocalHttpServer, QuietServer

PASS_SECRET = "1x0000000000000000000000000000000AA"
FAIL_SECRET = "2x0000000000000000000000000000000AA"
SPENT_SECRET = "3x0000000000000000000000000000000AA"

PATHS: Mapping[ChallengeProvider, str] = {
    ChallengeProvider.TURNSTILE: "/turnstile/v0/siteverify",
    ChallengeProvider.HCAPTCHA: "/hcaptcha/siteverify",
    ChallengeProvider.RECAPTCHA: "/recaptcha/api/siteverify",
}
_PROVIDER_BY_PATH = {path: provider for provider, path in PATHS.items()}

# A handler never waits longer than this for a client that stopped sending, so
# `stop()` cannot hang on a half-open connection.
_SOCKET_TIMEOUT = 5.0


class ReceivedRequest:
    """One siteverify request as the fake saw it."""

    def __init__(
        self, provider: ChallengeProvider, form: Mapping[str, str], content_type: str
    ) -> None:
        self.provider = provider
        self.form = dict(form)
        self.content_type = content_type

    def __repr__(self) -> str:
        # The form holds a secret; tests print requests on failure, secrets stay out.
        return f"ReceivedRequest({self.provider.value}, fields={sorted(self.form)})"


class FakeProvider(LocalHttpServer):
    """The siteverify endpoints of all three providers on one local server."""

    thread_name = "fake-challenge-provider"

    def __init__(self) -> None:
        super().__init__()
        self.delay = 0.0
        self.status: int | None = None
        self.garbage = False
        self.body: Mapping[str, object] | None = None
        # reCAPTCHA v3 answers carry a score; None answers like v2 (no score).
        self.recaptcha_score: float | None = 0.9
        self._requests: list[ReceivedRequest] = []

    # -- addresses -------------------------------------------------------------

    def url(self, provider: ChallengeProvider) -> str:
        return self.base_url + PATHS[provider]

    @property
    def urls(self) -> dict[ChallengeProvider, str]:
        """A siteverify URL for every provider, as HttpChallengeVerifier takes them."""
        return {provider: self.url(provider) for provider in ChallengeProvider}

    # -- what was received -----------------------------------------------------

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._requests)

    def _record(self, request: ReceivedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    # -- the answer ------------------------------------------------------------

    def _answer(self, provider: ChallengeProvider, form: Mapping[str, str]) -> dict[str, Any]:
        if self.body is not None:
            return dict(self.body)
        secret = form.get("secret", "")
        token = form.get("response", "")
        codes: list[str] = []
        if not secret:
            codes.append("missing-input-secret")
        elif secret not in (PASS_SECRET, FAIL_SECRET, SPENT_SECRET):
            codes.append("invalid-input-secret")
        if not token:
            codes.append("missing-input-response")
        if not codes and secret == FAIL_SECRET:
            codes.append("invalid-input-response")
        if not codes and secret == SPENT_SECRET:
            codes.append("timeout-or-duplicate")
        if codes:
            return {"success": False, "error-codes": codes}
        return _success(provider, self.recaptcha_score)


def _success(provider: ChallengeProvider, recaptcha_score: float | None) -> dict[str, Any]:
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    # Each provider's documented answer shape, near enough for the verifier.
    if provider is ChallengeProvider.TURNSTILE:
        return {
            "success": True,
            "error-codes": [],
            "challenge_ts": stamp,
            "hostname": "example.com",
            "action": "",
            "cdata": "",
        }
    if provider is ChallengeProvider.HCAPTCHA:
        return {"success": True, "challenge_ts": stamp, "hostname": "example.com", "credit": False}
    answer: dict[str, Any] = {"success": True, "challenge_ts": stamp, "hostname": "example.com"}
    if recaptcha_score is not None:
        answer.update(score=recaptcha_score, action="submit")
    return answer


class _Server(QuietServer):
    owner: FakeProvider


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = _SOCKET_TIMEOUT

    def do_POST(self) -> None:
        fake = self.server.owner
        provider = _PROVIDER_BY_PATH.get(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if provider is None:
            self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")
            return
        fields = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
        form = {name: values[-1] for name, values in fields.items()}
        fake._record(ReceivedRequest(provider, form, self.headers.get("Content-Type", "")))

        if fake.delay > 0 and fake._stopping.wait(fake.delay):
            return  # stopping: drop the connection rather than answer late
        if fake.garbage:
            self._send(fake.status or HTTPStatus.OK, b"<html>Bad Gateway</html>", "text/html")
            return
        body = json.dumps(fake._answer(provider, form)).encode()
        self._send(fake.status or HTTPStatus.OK, body, "application/json")

    def do_GET(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"POST only", "text/plain")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: the default writes every request to stderr.
        return


FakeProvider.handler = _Handler
FakeProvider.server_class = _Server
