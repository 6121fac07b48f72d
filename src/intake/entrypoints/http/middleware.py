"""The outermost layer: a request id on every answer, no answer outside the envelope,
the public endpoint's CORS headers on every one of its answers, and one access-log line
and the metrics of every request.

`RequestContext.serve` does it around whatever answers the request: the submission
routes' endpoints, which the application calls straight (app.py), and Starlette for the
rest, through `RequestContextMiddleware`, a pure ASGI middleware, so that it sees every
response, including Starlette's own.

The access log and the metrics name a request's route by its template
(`/f/{public_form_key}`), never its raw path: a path carries a form's public key, an
identifier that has no place in a log, and raw paths would make a label of every key
and every scanner's guess. A path no route matches is `unmatched`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from intake.domain.errors import ERRORS, REQUEST_UNAVAILABLE, ErrorCode, Rejection
from intake.entrypoints.http.cors import cors_headers, is_public_path
from intake.entrypoints.http.negotiation import prefers_html
from intake.entrypoints.http.rendering import error_response
from intake.metrics import HttpMetrics

log = logging.getLogger("intake.http")
access_log = logging.getLogger("intake.access")

PUBLIC_ROUTE = "/f/{public_form_key}"
SERVER_ROUTE = "/v1/forms/{form_id}/submissions"
SUBMISSION_ROUTES = (PUBLIC_ROUTE, SERVER_ROUTE)
UNMATCHED = "unmatched"


def new_request_id() -> str:
    return "req_" + os.urandom(10).hex()


def _first_header(scope: Scope, name: bytes) -> str | None:
    """The first of a repeated header, as the endpoints read it (Starlette's
    Headers.get): the Origin echoed is the one the allow-list was checked against."""
    headers: Iterable[tuple[bytes, bytes]] = scope.get("headers", ())
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


class _Answer:
    """The way out of one request: adds the request id, and the CORS headers the answer
    does not set itself, to the response's head, and remembers its status."""

    __slots__ = ("_cors", "_request_id", "_send", "started", "status")

    def __init__(self, send: Send, request_id: str, cors: list[tuple[bytes, bytes]]) -> None:
        self._send = send
        self._request_id = request_id.encode("ascii")
        self._cors = cors
        self.started = False
        self.status = 0

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            self.status = message["status"]
            headers = list(message.get("headers", ()))
            headers.append((b"x-request-id", self._request_id))
            if self._cors:
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in self._cors if h[0] not in present)
            message = {**message, "headers": headers}
        await self._send(message)


class RequestContext:
    """One per application: its metrics and its routes' templates."""

    def __init__(
        self,
        *,
        metrics: HttpMetrics | None = None,
        templates: Mapping[Callable[..., Any], str] | None = None,
    ) -> None:
        """`templates`: each route's endpoint and its path template."""
        self._metrics = metrics
        self._templates = dict(templates or {})

    async def serve(self, scope: Scope, receive: Receive, send: Send, app: ASGIApp) -> None:
        """`app` answers the request, within everything this module promises."""
        request_id = new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        cors = _public_cors(scope) if is_public_path(scope.get("path", "")) else []
        answer = _Answer(send, request_id, cors)
        started = time.perf_counter()
        try:
            await app(scope, receive, answer.send)
        except Exception:
            # A fault of ours is never a 500 with a trace: the sender may retry, and the
            # log keeps the trace under the request id (never the submission's contents).
            log.exception("unhandled error", extra={"request_id": request_id})
            if not answer.started:
                await self._fault(scope, receive, answer, request_id)
        finally:
            self._record(scope, request_id, answer.status, time.perf_counter() - started)

    async def _fault(
        self, scope: Scope, receive: Receive, answer: _Answer, request_id: str
    ) -> None:
        submitting = self._route(scope) in SUBMISSION_ROUTES
        if scope.get("method") == "POST" and submitting:
            scope.setdefault("state", {}).setdefault("outcome", ErrorCode.SERVICE_UNAVAILABLE.value)
        # The table's 503 speaks of a submission: any other request (a management call,
        # a dashboard page) is told in words of its own.
        spec = ERRORS[ErrorCode.SERVICE_UNAVAILABLE] if submitting else REQUEST_UNAVAILABLE
        rejection = Rejection(ErrorCode.SERVICE_UNAVAILABLE, retry_after=1, spec=spec)
        browser = prefers_html(_first_header(scope, b"accept") or "")
        response = error_response(rejection, request_id, browser=browser)
        await response(scope, receive, answer.send)

    def _record(self, scope: Scope, request_id: str, status: int, seconds: float) -> None:
        """The request's metrics and its access-log line."""
        state = scope.get("state", {})
        route = self._route(scope)
        method = scope.get("method", "")
        outcome = state.get("outcome")
        if self._metrics is not None:
            self._metrics.observe(
                route=route, method=method, status=status, outcome=outcome, seconds=seconds
            )
        access_log.info(
            "request",
            extra={
                "request_id": request_id,
                "method": method,
                "route": route,
                "form_id": state.get("form_id"),
                "outcome": outcome,
                "status": status,
                "duration_ms": round(seconds * 1000, 2),
            },
        )

    def _route(self, scope: Scope) -> str:
        """The matched route's template; the router leaves its endpoint in the scope,
        also for a wrong method on a known path."""
        endpoint = scope.get("endpoint")
        return self._templates.get(endpoint, UNMATCHED) if endpoint is not None else UNMATCHED


class RequestContextMiddleware:
    """`RequestContext` around every HTTP request Starlette answers."""

    def __init__(self, app: ASGIApp, *, context: RequestContext) -> None:
        self.app = app
        self._context = context

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self._context.serve(scope, receive, send, self.app)


def _raw(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


# Without an Origin (a plain form's post, a server's call) the headers are always the
# same: made once, read by every answer, changed by none.
_NO_ORIGIN_CORS = _raw(cors_headers(None))


def _public_cors(scope: Scope) -> list[tuple[bytes, bytes]]:
    origin = _first_header(scope, b"origin")
    return _raw(cors_headers(origin)) if origin else _NO_ORIGIN_CORS
