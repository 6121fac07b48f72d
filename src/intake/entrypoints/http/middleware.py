"""The outermost layer: a request id on every answer, no answer outside the envelope,
the public endpoint's CORS headers on every one of its answers, and one access-log line
and the metrics of every request.

A pure ASGI middleware, so it sees every response, including Starlette's own.

The access log and the metrics name a request's route by its template
(`/f/{public_form_key}`), never its raw path: a path carries a form's public key, an
identifier that has no place in a log, and raw paths would make a label of every key
and every scanner's guess. A path no route matches is `unmatched`.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from intake.domain.errors import ErrorCode
from intake.entrypoints.http.cors import cors_headers, is_public_path
from intake.entrypoints.http.negotiation import prefers_html
from intake.entrypoints.http.rendering import service_unavailable
from intake.metrics import HttpMetrics

log = logging.getLogger("intake.http")
access_log = logging.getLogger("intake.access")

PUBLIC_ROUTE = "/f/{public_form_key}"
SERVER_ROUTE = "/v1/forms/{form_id}/submissions"
SUBMISSION_ROUTES = (PUBLIC_ROUTE, SERVER_ROUTE)
UNMATCHED = "unmatched"


def new_request_id() -> str:
    return "req_" + secrets.token_hex(10)


class RequestContextMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        metrics: HttpMetrics | None = None,
        templates: Mapping[Callable[..., Any], str] | None = None,
    ) -> None:
        """`templates`: each route's endpoint and its path template."""
        self.app = app
        self._metrics = metrics
        self._templates = dict(templates or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        # The first of a repeated header, as the endpoints read it (Starlette's
        # Headers.get): the Origin echoed is the one the allow-list was checked against.
        request_headers: dict[bytes, bytes] = {}
        for name, value in scope.get("headers", []):
            request_headers.setdefault(name, value)
        origin = request_headers.get(b"origin")
        cors = (
            _raw(cors_headers(origin.decode("latin-1") if origin is not None else None))
            if is_public_path(scope.get("path", ""))
            else []
        )
        started = time.perf_counter()
        status = 0
        response_started = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode("ascii")))
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in cors if h[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            # A fault of ours is never a 500 with a trace: the sender may retry, and the
            # log keeps the trace under the request id (never the submission's contents).
            log.exception("unhandled error", extra={"request_id": request_id})
            if not response_started:
                if scope.get("method") == "POST" and self._route(scope) in SUBMISSION_ROUTES:
                    scope.setdefault("state", {}).setdefault(
                        "outcome", ErrorCode.SERVICE_UNAVAILABLE.value
                    )
                accept = request_headers.get(b"accept", b"").decode("latin-1")
                response = service_unavailable(request_id, browser=prefers_html(accept))
                await response(scope, receive, send_with_id)
        finally:
            seconds = time.perf_counter() - started
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


def _raw(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
