"""GET /metrics: the service's Prometheus metrics, with the figures read from the store
at scrape time (docs/operations.md).

For the operator only: the app serves the route only when INTAKE_METRICS_TOKEN is set
(unset, /metrics is an unknown path), and then only to a request bearing that token.
Anything else, a wrong token as much as none, is the same 401 in the envelope: the
counts and the store's figures would tell a client how its own request ended (a filled
honeypot, spam, a real submission).
"""

from __future__ import annotations

import hashlib
import hmac
import logging

import anyio
from starlette.requests import Request
from starlette.responses import Response

from intake.domain.errors import METRICS_UNAUTHORIZED, ErrorCode, Rejection, StorageUnavailable
from intake.entrypoints.http.rendering import error_response
from intake.metrics import ServiceMetrics
from intake.serve_runtime import ServeRuntime
from intake.service.health import StoreFigures, store_figures

log = logging.getLogger("intake.http")

ROUTE = "/metrics"


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def authorized(authorization: str | None, token: str) -> bool:
    """Whether an Authorization header carries `token` as a bearer token. The digests
    are compared, in constant time: neither the token's contents nor its length show in
    how long a refusal takes."""
    scheme, _, given = (authorization or "").strip().partition(" ")
    matches = hmac.compare_digest(_digest(given.strip()), _digest(token))
    return scheme.lower() == "bearer" and matches


async def metrics(request: Request) -> Response:
    runtime: ServeRuntime = request.app.state.runtime
    token = runtime.settings.metrics_token
    if token is None or not authorized(request.headers.get("authorization"), token):
        return error_response(
            Rejection(ErrorCode.UNAUTHORIZED, spec=METRICS_UNAUTHORIZED),
            request.state.request_id,
            headers={"WWW-Authenticate": "Bearer"},
        )
    figures: StoreFigures | None
    try:
        figures = await store_figures(runtime.store, runtime.clock, runtime.settings.plans)
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
