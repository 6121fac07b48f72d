"""The outermost layer: a request id on every answer, no answer outside the envelope,
and the public endpoint's CORS headers on every one of its answers.

A pure ASGI middleware, so it sees every response, including Starlette's own.
"""

from __future__ import annotations

import logging
import secrets
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from intake.entrypoints.http.cors import cors_headers, is_public_path
from intake.entrypoints.http.negotiation import prefers_html
from intake.entrypoints.http.rendering import service_unavailable

log = logging.getLogger("intake.http")
access_log = logging.getLogger("intake.access")


def new_request_id() -> str:
    return "req_" + secrets.token_hex(10)


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        request_headers = dict(scope.get("headers", []))
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
                accept = request_headers.get(b"accept", b"").decode("latin-1")
                response = service_unavailable(request_id, browser=prefers_html(accept))
                await response(scope, receive, send_with_id)
        finally:
            state = scope.get("state", {})
            access_log.info(
                "request",
                extra={
                    "request_id": request_id,
                    "method": scope.get("method"),
                    "route": state.get("route", scope.get("path")),
                    "form_id": state.get("form_id"),
                    "outcome": state.get("outcome"),
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                },
            )


def _raw(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
