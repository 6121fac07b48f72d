"""The two submission endpoints, the CORS preflight and the thank-you page."""

from __future__ import annotations

import asyncio
import logging
import types
from collections.abc import AsyncIterator, Callable, Generator, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope

from intake.domain.errors import ErrorCode, IntakeError
from intake.entrypoints.http.client_ip import client_ip
from intake.entrypoints.http.cors import preflight_headers
from intake.entrypoints.http.negotiation import prefers_html
from intake.entrypoints.http.pages import thank_you_page
from intake.entrypoints.http.rendering import HTML_HEADERS, HTML_TYPE, outcome_response
from intake.serve_runtime import ServeRuntime
from intake.service.messages import (
    Accepted,
    BodyDeadline,
    Outcome,
    PublicTarget,
    RawBody,
    Refused,
    ServerTarget,
    SubmitRequest,
)

log = logging.getLogger("intake.http")


def _runtime(request: Request) -> ServeRuntime:
    runtime: ServeRuntime = request.app.state.runtime
    return runtime


class _Heads:
    """The request's header lines read in one pass: each name's first line, as
    Starlette's Headers.get reads it, and every X-Forwarded-For line. (Headers walks
    and decodes them all again on each read, and a submission reads nine.)"""

    __slots__ = ("_first", "forwarded_for")

    def __init__(self, scope: Scope) -> None:
        first: dict[bytes, bytes] = {}
        forwarded: list[str] = []
        for name, value in scope["headers"]:
            if name == b"x-forwarded-for":
                forwarded.append(value.decode("latin-1"))
            first.setdefault(name, value)
        self._first = first
        # A proxy may add its own header line rather than extend the client's.
        self.forwarded_for = ", ".join(forwarded) or None

    def get(self, name: bytes) -> str | None:
        value = self._first.get(name)
        return None if value is None else value.decode("latin-1")

    def content_length(self) -> int | None:
        raw = self.get(b"content-length")
        # isdigit() alone also takes "²" and other digits that int() refuses.
        if raw is None or not (raw.isascii() and raw.isdigit()):
            return None
        return int(raw)


@types.coroutine
def _resumed(steps: Generator[Any, None, Message], pending: Any) -> Generator[Any, Any, Message]:
    """The rest of an awaitable whose first step was taken and gave `pending` (what it
    waits on), run as `await` runs it: what the task sends or throws goes on to it."""
    while True:
        try:
            try:
                sent = yield pending
            except BaseException as exc:  # a cancel (the deadline's, among others) goes on
                pending = steps.throw(exc)
            else:
                pending = steps.send(sent)
        except StopIteration as done:
            message: Message = done.value
            return message


async def _receive_within(receive: Receive, deadline: BodyDeadline) -> Message:
    """The next message, within the deadline. A small body most often came with its head
    and is in already: then receive returns without waiting, and arming the deadline's
    timer and disarming it would cost six times that receive. So the first step is taken
    without it, and the timer armed only once the receive has to wait (asyncio's
    timeout, which a past deadline also lets through a receive that needs no wait)."""
    steps = receive().__await__()
    try:
        pending = steps.send(None)
    except StopIteration as done:
        message: Message = done.value
        return message
    async with asyncio.timeout_at(deadline.at):
        return await _resumed(steps, pending)


async def _chunks(request: Request, deadline: BodyDeadline) -> AsyncIterator[bytes]:
    """The body as it arrives; a sender too slow to finish within the time allowed, or
    one that goes away, sent a body that cannot be read. Each receive gets its own
    timeout: one held open across `yield` would outlive an early stop. asyncio's own
    (the server's loop), as it costs half of an anyio cancel scope, on every request.
    The deadline is read at each receive: the pipeline extends it for uploads. The
    messages are read straight from the server, not through Starlette's stream, which
    a small body would have cost three timeouts for one receive."""
    receive = request.receive
    while True:
        try:
            message = await _receive_within(receive, deadline)
        except TimeoutError:
            raise IntakeError.of(ErrorCode.MALFORMED_REQUEST) from None
        if message["type"] != "http.request":  # http.disconnect: the sender went away
            raise IntakeError.of(ErrorCode.MALFORMED_REQUEST)
        chunk = message.get("body", b"")
        if chunk:
            yield chunk
        if not message.get("more_body", False):
            return


def _request(request: Request, heads: _Heads, target: PublicTarget | ServerTarget) -> SubmitRequest:
    runtime = _runtime(request)
    peer = request.client.host if request.client else None
    deadline = BodyDeadline(asyncio.get_running_loop().time(), runtime.settings.body_timeout)
    return SubmitRequest(
        target=target,
        body=RawBody(
            content_type=heads.get(b"content-type"),
            content_length=heads.content_length(),
            chunks=_chunks(request, deadline),
            deadline=deadline,
        ),
        client_ip=client_ip(peer, heads.forwarded_for, runtime.settings.trusted_proxies),
        origin=heads.get(b"origin"),
        idempotency_key=heads.get(b"idempotency-key"),
        challenge_token=heads.get(b"x-challenge-token"),
        user_agent=heads.get(b"user-agent"),
        referrer=heads.get(b"referer"),
    )


def _note(request: Request, outcome: Outcome) -> None:
    state = request.scope.setdefault("state", {})
    if outcome.form is not None:
        state["form_id"] = outcome.form.form_id
    if isinstance(outcome, Refused):
        state["outcome"] = outcome.rejection.code.value
        # Which step refused is for the operator's debugging; the access line has the code.
        log.debug(
            "refused at step %s",
            outcome.step.name.lower(),
            extra={"request_id": request.state.request_id},
        )
    else:
        assert isinstance(outcome, Accepted)
        state["outcome"] = "replayed" if outcome.replayed else "accepted"


async def _submit(
    request: Request,
    target: PublicTarget | ServerTarget,
    headers_for: Callable[[Outcome], Mapping[str, str] | None] | None = None,
) -> ASGIApp:
    """Runs one submission through the pipeline and answers it as the client prefers."""
    heads = _Heads(request.scope)
    outcome = await _runtime(request).pipeline.submit(_request(request, heads, target))
    _note(request, outcome)
    return outcome_response(
        outcome,
        request.state.request_id,
        browser=prefers_html(heads.get(b"accept")),
        origin=heads.get(b"origin"),
        referer=heads.get(b"referer"),
        headers=headers_for(outcome) if headers_for is not None else None,
    )


def _bearer_challenge(outcome: Outcome) -> Mapping[str, str] | None:
    """A refused API key is told which scheme to authenticate with."""
    if isinstance(outcome, Refused) and outcome.rejection.status == 401:
        return {"WWW-Authenticate": "Bearer"}
    return None


async def submit_public(request: Request) -> ASGIApp:
    return await _submit(request, PublicTarget(request.path_params["public_form_key"]))


async def submit_server(request: Request) -> ASGIApp:
    target = ServerTarget(
        form_id=request.path_params["form_id"],
        authorization=request.headers.get("authorization"),
    )
    return await _submit(request, target, _bearer_challenge)


async def preflight(request: Request) -> Response:
    return Response(status_code=204, headers=preflight_headers(request.headers.get("origin")))


async def public_form(request: Request) -> ASGIApp:
    """`/f/{key}`: one route for both methods, so a wrong method's Allow names both."""
    if request.method == "OPTIONS":
        return await preflight(request)
    return await submit_public(request)


async def thanks(request: Request) -> Response:
    return Response(
        thank_you_page(), status_code=200, headers=dict(HTML_HEADERS), media_type=HTML_TYPE
    )
