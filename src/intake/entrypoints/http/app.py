"""The Starlette application: routes, error rendering and the runtime's lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from intake.config import Settings
from intake.containers import Runtime, open_runtime
from intake.domain.errors import ErrorCode, Rejection, StorageUnavailable
from intake.entrypoints.http import submissions
from intake.entrypoints.http.middleware import RequestContextMiddleware
from intake.entrypoints.http.negotiation import prefers_html
from intake.entrypoints.http.openapi import openapi_document
from intake.entrypoints.http.rendering import error_response

log = logging.getLogger("intake.http")


async def healthz(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def readyz(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    try:
        await runtime.store.ping()
    except StorageUnavailable:
        return error_response(
            Rejection(ErrorCode.SERVICE_UNAVAILABLE, retry_after=1), request.state.request_id
        )
    return JSONResponse({"ok": True})


async def openapi(request: Request) -> Response:
    return JSONResponse(openapi_document())


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, wrong method) in the spec's envelope."""
    assert isinstance(exc, HTTPException)
    browser = prefers_html(request.headers.get("accept"))
    request_id = request.state.request_id
    if exc.status_code == 404:
        return error_response(Rejection(ErrorCode.FORM_NOT_FOUND), request_id, browser=browser)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        return error_response(
            Rejection(ErrorCode.MALFORMED_REQUEST),
            request_id,
            browser=browser,
            status=405,
            headers=headers,
        )
    return error_response(
        Rejection(ErrorCode.MALFORMED_REQUEST), request_id, browser=browser, headers=headers
    )


def create_app(settings: Settings | None = None, **overrides: Any) -> Starlette:
    """The ASGI application. `overrides` replace ports, as `open_runtime` takes them."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_runtime(settings, **overrides) as runtime:
            app.state.runtime = runtime
            yield

    routes = [
        Route("/f/{public_form_key}", submissions.public_form, methods=["POST", "OPTIONS"]),
        Route("/f/{public_form_key}/thanks", submissions.thanks, methods=["GET"]),
        Route("/v1/forms/{form_id}/submissions", submissions.submit_server, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(RequestContextMiddleware)],
        exception_handlers={HTTPException: _http_error},
        lifespan=lifespan,
    )
