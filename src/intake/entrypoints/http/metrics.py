"""GET /metrics: the service's Prometheus metrics, with the figures read from the store
at scrape time (docs/operations.md).

Open unless INTAKE_METRICS_TOKEN is set; then it wants that token as a bearer token, and
anything else is a 401 in the envelope.
"""

from __future__ import annotations

import hmac
import logging

import anyio
from starlette.requests import Request
from starlette.responses import Response

from intake.containers import Runtime
from intake.domain.errors import ErrorCode, Rejection, StorageUnavailable
from intake.entrypoints.http.rendering import error_response
from intake.metrics import ServiceMetrics, StoreFigures, read_store_figures

log = logging.getLogger("intake.http")


def _authorized(authorization: str | None, token: str) -> bool:
    scheme, _, given = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


async def metrics(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    token = runtime.settings.metrics_token
    if token is not None and not _authorized(request.headers.get("authorization"), token):
        return error_response(
            Rejection(ErrorCode.UNAUTHORIZED),
            request.state.request_id,
            headers={"WWW-Authenticate": "Bearer"},
        )
    figures: StoreFigures | None
    try:
        figures = await read_store_figures(
            runtime.store, runtime.clock.now(), runtime.settings.plans
        )
    except StorageUnavailable:
        # The process's own counts are still worth a scrape; intake_store_up says 0.
        log.warning("metrics scraped without the store's figures: the store is unavailable")
        figures = None
    service: ServiceMetrics = request.app.state.metrics
    # Off the event loop: in multiprocess mode this reads every worker's files.
    body, content_type = await anyio.to_thread.run_sync(
        service.render, figures, request.headers.get("accept")
    )
    return Response(body, headers={"Content-Type": content_type, "Cache-Control": "no-store"})
