"""The Starlette application: routes, error rendering and the runtime's lifespan."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeAlias, Unpack

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from intake.config import Settings
from intake.domain.errors import NOT_READY, ErrorCode, Rejection, StorageUnavailable
from intake.entrypoints.http import (
    client_script,
    dashboard,
    files,
    management,
    metrics,
    submissions,
)
from intake.entrypoints.http.middleware import (
    PUBLIC_ROUTE,
    SERVER_ROUTE,
    SUBMISSION_ROUTES,
    RequestContext,
    RequestContextMiddleware,
)
from intake.entrypoints.http.negotiation import prefers_html
from intake.entrypoints.http.openapi import openapi_json
from intake.entrypoints.http.rendering import error_response
from intake.logs import skip_unwritten_record_fields
from intake.metrics import ServiceMetrics
from intake.serve_runtime import ServeOverrides, ServeRuntime, open_serve_runtime
from intake.service.health import Readiness

log = logging.getLogger("intake.http")


async def healthz(request: Request) -> Response:
    return JSONResponse({"ok": True})


async def readyz(request: Request) -> Response:
    runtime: ServeRuntime = request.app.state.runtime
    try:
        await Readiness(runtime.store).check()
    except StorageUnavailable:
        return error_response(
            Rejection(ErrorCode.SERVICE_UNAVAILABLE, retry_after=1, spec=NOT_READY),
            request.state.request_id,
        )
    # Ready with Redis down too: submissions are accepted, limited per process
    # (docs/operations.md, "Health and readiness").
    return JSONResponse({"ok": True, "rate_limits": _rate_limits(runtime)})


def _rate_limits(runtime: ServeRuntime) -> str:
    fallback = runtime.rate_limit_fallback
    if fallback is None:
        return "process" if runtime.settings.redis_url is None else "shared"
    return "fallback" if fallback.degraded else "shared"


async def openapi(request: Request) -> Response:
    return Response(openapi_json(), media_type="application/json")


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, wrong method) in the spec's envelope."""
    assert isinstance(exc, HTTPException)
    browser = prefers_html(request.headers.get("accept"))
    request_id = request.state.request_id
    if browser and exc.status_code in (404, 405) and dashboard.is_dashboard_path(request.url.path):
        return dashboard.unknown_address(request, exc.status_code, dict(exc.headers or {}))
    if exc.status_code == 404:
        # Under /v1 the management API's own code; elsewhere the submission endpoints'.
        unknown = (
            ErrorCode.NOT_FOUND
            if request.url.path.startswith(management.PREFIX + "/")
            else ErrorCode.FORM_NOT_FOUND
        )
        return error_response(Rejection(unknown), request_id, browser=browser)
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


def _endpoint_app(endpoint: Callable[[Request], Any]) -> ASGIApp:
    """The endpoint as an ASGI application, as Starlette's Route makes it, less the
    handling of HTTPException, which the submission endpoints do not raise."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        response: ASGIApp = await endpoint(Request(scope, receive, send))
        await response(scope, receive, send)

    return app


class IntakeApp(Starlette):
    """Starlette, with the submission routes answered straight: the bulk of the traffic
    goes past no middleware stack, router or exception layers, only `RequestContext`,
    which every other request also gets (from RequestContextMiddleware). A request these
    routes do not fully match (another method, another path) is Starlette's."""

    def __init__(
        self, *, context: RequestContext, straight: Sequence[Route], **kwargs: Any
    ) -> None:
        super().__init__(
            middleware=[Middleware(RequestContextMiddleware, context=context)], **kwargs
        )
        self._context = context
        self._straight = [(route, _endpoint_app(route.endpoint)) for route in straight]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for route, app in self._straight:
                match, child_scope = route.matches(scope)
                if match is Match.FULL:
                    scope["app"] = self
                    scope["router"] = self.router
                    scope["route"] = route
                    scope.update(child_scope)
                    await self._context.serve(scope, receive, send, app)
                    return
        await super().__call__(scope, receive, send)


# How the application opens the services it serves with, as it starts, and closes them
# as it stops: what a container composes (serve_runtime.py).
OpenServices: TypeAlias = Callable[[], AbstractAsyncContextManager[ServeRuntime]]


def create_app(settings: Settings | None = None, **overrides: Unpack[ServeOverrides]) -> Starlette:
    """The ASGI application. `overrides` replace ports, as `open_serve_runtime` takes
    them."""
    chosen = settings if settings is not None else Settings.from_env()
    return serving_app(chosen, lambda: open_serve_runtime(chosen, **overrides))


# Objects a serving worker's young generation may gain before it is collected. Python's
# default, 700, is reached dozens of times a second under load by the objects of the
# requests in flight alone, and each pass walks them all to find the few cycles a request
# leaves (its futures' callbacks, an error's traceback); 10,000 collects those cycles
# every few seconds instead, a few hundred kB at most, for about 2% less CPU a submission.
YOUNG_COLLECTION_THRESHOLD = 10_000


def served_app() -> Starlette:
    """What `intake serve` runs in each worker: `create_app`'s application, which, once
    started, sets what start-up made (modules, caches, pools: some 90,000 objects that
    live as long as the process) apart from the garbage collector, so that its full
    passes, every few seconds under load, no longer walk them each time, and collects
    its young objects less often (YOUNG_COLLECTION_THRESHOLD); and log records
    made without the facts no line holds."""
    skip_unwritten_record_fields()
    settings = Settings.from_env()
    return serving_app(settings, lambda: open_serve_runtime(settings), settle=True)


def serving_app(settings: Settings, services: OpenServices, *, settle: bool = False) -> Starlette:
    """The application serving with what `services` opens as it starts (a container's
    services: `opened(container, container.runtime)`), closed as it stops."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # A database not reachable yet leaves the process up, not ready (/readyz 503).
        async with services() as runtime:
            app.state.runtime = runtime
            if runtime.rate_limit_fallback is not None:
                runtime.rate_limit_fallback.report_fallback(service_metrics.rate_limiter_fallback)
            if settle:
                gc.freeze()
                gc.set_threshold(YOUNG_COLLECTION_THRESHOLD)
            yield

    public = Route(PUBLIC_ROUTE, submissions.public_form, methods=["POST", "OPTIONS"])
    server = Route(SERVER_ROUTE, submissions.submit_server, methods=["POST"])
    routes = [
        public,
        Route("/f/{public_form_key}/thanks", submissions.thanks, methods=["GET"]),
        server,
        Route(files.ROUTE, files.download, methods=["GET", "HEAD"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        *client_script.routes(),
        *management.routes(),
        *dashboard.routes(),
    ]
    # For the operator only: without a token to ask for, /metrics is an unknown path.
    if settings.metrics_token is not None:
        routes.append(Route(metrics.ROUTE, metrics.metrics, methods=["GET"]))
    service_metrics = ServiceMetrics(SUBMISSION_ROUTES)
    context = RequestContext(
        metrics=service_metrics.http, templates={route.endpoint: route.path for route in routes}
    )
    app = IntakeApp(
        context=context,
        straight=[public, server],
        routes=routes,
        exception_handlers={HTTPException: _http_error},
        lifespan=lifespan,
    )
    app.state.metrics = service_metrics
    # A path with a trailing slash is an unknown path (404 in the envelope), not a 307 to
    # a Location built from the client's Host header, which would resend the body.
    app.router.redirect_slashes = False
    return app
