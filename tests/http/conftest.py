"""The HTTP suite's harness: the real Starlette app on in-memory fakes, driven over HTTP.

Every answer the suite receives goes through `SpecCheck`: it must carry an X-Request-ID,
and an answer of a documented operation must have a documented status, the documented
headers and a body that validates against the schema /openapi.json gives for it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack
from typing import Any, ParamSpec, TypeVar

import anyio
import httpx2
import jsonschema
import pytest
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from intake.adapters.memory import FakeChallengeVerifier, FakeClock, InMemoryStore, SeededIdSource
from intake.config import Settings
from intake.domain.model import Form, Submission, Workspace
from intake.entrypoints.http import create_app
from intake.ports.challenge import ChallengeVerifier
from intake.ports.submissions import OutboxRow
from intake.service.admin import Admin, CreatedKey

P = ParamSpec("P")
T = TypeVar("T")

PEER = "203.0.113.5"
PEER_HEADER = "x-test-peer"
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

ERROR_KEYS = {"ok", "error", "request_id"}


class PeerFromHeader:
    """Test-only ASGI wrapper: `X-Test-Peer: 198.51.100.7` makes that the socket peer of
    the request, as if it came from another host. The header is removed before the app
    sees it, so it cannot be mistaken for anything the service reads."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            peer = [v for k, v in headers if k == PEER_HEADER.encode()]
            if peer:
                scope = {
                    **scope,
                    "client": (peer[-1].decode("latin-1"), 40_000),
                    "headers": [(k, v) for k, v in headers if k != PEER_HEADER.encode()],
                }
        await self.app(scope, receive, send)


def _resolve_refs(node: Any, document: Mapping[str, Any]) -> Any:
    """The schema with every local `$ref` replaced by what it points at."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = document
            for part in ref[2:].split("/"):
                target = target[part]
            return _resolve_refs(target, document)
        return {key: _resolve_refs(value, document) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolve_refs(item, document) for item in node]
    return node


class SpecCheck:
    """Holds every answer against the OpenAPI document the service publishes."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        # (operationId, status, error code or None) of every answer that was validated.
        self.seen: list[tuple[str, int, str | None]] = []

    def operation(self, method: str, path: str) -> Mapping[str, Any] | None:
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "f":
            template = "/f/{public_form_key}"
        elif len(parts) == 4 and parts[:2] == ["v1", "forms"] and parts[3] == "submissions":
            template = "/v1/forms/{form_id}/submissions"
        else:
            return None
        operation: Mapping[str, Any] | None = self.document["paths"][template].get(method.lower())
        return operation

    def check(self, response: httpx2.Response) -> None:
        request = response.request
        assert response.headers.get("x-request-id"), f"no X-Request-ID on {request.url}"
        operation = self.operation(request.method, request.url.path)
        if operation is None:
            return
        status = str(response.status_code)
        documented = operation["responses"]
        assert status in documented, f"{request.method} {request.url.path}: {status} undocumented"
        spec = _resolve_refs(documented[status], self.document)
        for name, header in spec.get("headers", {}).items():
            value = response.headers.get(name)
            # CORS: every answer of the public endpoint echoes the request's Origin.
            required = header.get("required", False) or (
                name == "Access-Control-Allow-Origin" and "origin" in request.headers
            )
            if value is None:
                assert not required, f"{status} lacks its documented header {name}"
                continue
            jsonschema.validate(value, header["schema"])
        media = response.headers.get("content-type", "").split(";")[0].strip()
        content = spec.get("content")
        code = None
        if not content:
            assert not response.content, f"{status} has a body it does not document"
        else:
            assert media in content, f"{status} is {media!r}, documented {sorted(content)}"
            if media == "application/json":
                body = response.json()
                jsonschema.validate(body, content[media]["schema"])
                code = body["error"]["code"] if body.get("ok") is False else None
        self.seen.append((operation["operationId"], response.status_code, code))


class Service:
    """One running app on fakes, a client for it, and the admin that seeds it."""

    def __init__(
        self,
        *,
        app: ASGIApp,
        client: TestClient,
        store: InMemoryStore,
        clock: FakeClock,
        ids: SeededIdSource,
        challenge: ChallengeVerifier,
        spec: SpecCheck,
    ) -> None:
        self.spec = spec
        self.app = app
        self.client = client
        self.store = store
        self.clock = clock
        self.ids = ids
        self.challenge = challenge
        self.admin = Admin(store, clock, ids)

    def run(self, fn: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        """Runs an async call on the app's own event loop."""
        portal = self.client.portal
        assert portal is not None
        return portal.call(functools.partial(fn, *args, **kwargs))

    # Seeding

    def workspace(self, **options: Any) -> Workspace:
        return self.run(self.admin.create_workspace, options.pop("name", "Acme"), **options)

    def form(self, workspace_id: str, **options: Any) -> Form:
        return self.run(self.admin.create_form, workspace_id, **options)

    def api_key(self, workspace_id: str) -> CreatedKey:
        return self.run(self.admin.create_api_key, workspace_id)

    def update_form(self, form_id: str, **changes: Any) -> Form:
        return self.run(self.admin.update_form, form_id, **changes)

    # Calls

    def public(
        self,
        key: str,
        *,
        peer: str | None = None,
        origin: str | None = None,
        idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx2.Response:
        return self.client.post(
            f"/f/{key}",
            headers=_headers(headers, peer=peer, origin=origin, idempotency_key=idempotency_key),
            **kwargs,
        )

    def server(
        self,
        form_id: str,
        api_key: str | None,
        *,
        peer: str | None = None,
        idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx2.Response:
        extra = dict(headers or {})
        if api_key is not None:
            extra.setdefault("authorization", f"Bearer {api_key}")
        return self.client.post(
            f"/v1/forms/{form_id}/submissions",
            headers=_headers(extra, peer=peer, idempotency_key=idempotency_key),
            **kwargs,
        )

    def raw(
        self,
        path: str,
        headers: Iterable[tuple[str, str]],
        chunks: Iterator[bytes],
        *,
        stall: bool = False,
    ) -> RawExchange:
        """Drives the ASGI app directly with a body fed chunk by chunk, counting how many
        bytes the app pulled: what a streamed upload looks like from the server side.
        With `stall`, the sender goes quiet after the last chunk instead of ending."""
        portal = self.client.portal
        assert portal is not None
        return portal.call(_exchange, self.app, path, list(headers), chunks, stall)

    # What is stored

    def submissions(self, form_id: str) -> list[Submission]:
        async def collect() -> list[Submission]:
            return [s async for s in self.admin.submissions(form_id)]

        return self.run(collect)

    def submission(self, submission_id: str) -> Submission:
        found = self.run(self.store.submissions.get, submission_id)
        assert found is not None, f"{submission_id} is not stored"
        return found

    def outbox(self, submission_id: str) -> list[OutboxRow]:
        return self.store.outbox_for(submission_id)

    def used(self, workspace_id: str) -> int:
        return self.run(self.admin.usage, workspace_id).used

    def stored(self) -> tuple[int, int]:
        """(submissions, outbox rows): what a refusal must leave as it found."""
        return self.store.count_submissions(), self.store.count_outbox()


def _headers(
    headers: Mapping[str, str] | None,
    *,
    peer: str | None = None,
    origin: str | None = None,
    idempotency_key: str | None = None,
) -> dict[str, str]:
    merged = dict(headers or {})
    if peer is not None:
        merged[PEER_HEADER] = peer
    if origin is not None:
        merged["origin"] = origin
    if idempotency_key is not None:
        merged["idempotency-key"] = idempotency_key
    return merged


class RawExchange:
    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""
        self.pulled = 0  # body bytes the app asked for

    def json(self) -> Any:
        return json.loads(self.body)


async def _exchange(
    app: ASGIApp,
    path: str,
    headers: list[tuple[str, str]],
    chunks: Iterator[bytes],
    stall: bool,
) -> RawExchange:
    exchange = RawExchange()
    ended = False

    async def receive() -> Message:
        nonlocal ended
        if ended:
            return {"type": "http.disconnect"}
        chunk = next(chunks, None)
        if chunk is None and stall:
            await anyio.sleep_forever()
        if chunk is None:
            ended = True
            return {"type": "http.request", "body": b"", "more_body": False}
        exchange.pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            exchange.status = message["status"]
            exchange.headers = {
                k.decode("latin-1"): v.decode("latin-1") for k, v in message["headers"]
            }
        elif message["type"] == "http.response.body":
            exchange.body += message.get("body", b"")

    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        "client": (PEER, 1234),
        "server": ("testserver", 80),
    }
    await app(scope, receive, send)
    return exchange


ServiceFactory = Callable[..., Service]


@pytest.fixture
def make_service() -> Iterator[ServiceFactory]:
    """Builds a running service; `settings` and `challenge` replace the defaults, and
    `challenge=None` with `real_challenge=True` keeps the container's own verifier."""
    with ExitStack() as stack:

        def make(
            settings: Settings | None = None,
            *,
            challenge: ChallengeVerifier | None = None,
            real_challenge: bool = False,
            store: InMemoryStore | None = None,
        ) -> Service:
            store = store or InMemoryStore()
            clock, ids = FakeClock(), SeededIdSource()
            verifier = None if real_challenge else (challenge or FakeChallengeVerifier())
            app = create_app(
                settings or Settings(),
                store=store,
                clock=clock,
                id_source=ids,
                challenge=verifier,
            )
            client = TestClient(PeerFromHeader(app), client=(PEER, 1234), follow_redirects=False)
            stack.enter_context(client)
            document = client.get("/openapi.json").json()
            check = SpecCheck(document)

            def hook(response: httpx2.Response) -> None:
                response.read()
                check.check(response)

            client.event_hooks = {"request": [], "response": [hook]}
            runtime = app.state.runtime
            return Service(
                app=app,
                client=client,
                store=store,
                clock=clock,
                ids=ids,
                challenge=verifier or runtime.challenge,
                spec=check,
            )

        yield make


class Seeded:
    """A service with one free workspace, a public form and an API key in it."""

    def __init__(self, service: Service) -> None:
        self.svc = service
        self.workspace = service.workspace()
        self.form = service.form(self.workspace.workspace_id, name="Contact")
        self.key = service.api_key(self.workspace.workspace_id)

    @property
    def fake_challenge(self) -> FakeChallengeVerifier:
        assert isinstance(self.svc.challenge, FakeChallengeVerifier)
        return self.svc.challenge


@pytest.fixture
def svc(make_service: ServiceFactory) -> Service:
    return make_service()


@pytest.fixture
def seeded(svc: Service) -> Seeded:
    return Seeded(svc)


# Part 7 of the interface specification, copied from it verbatim: the suite checks the
# service against the text, not against the service's own table.
SPEC_ERRORS: Mapping[str, tuple[int, str]] = {
    "malformed_request": (400, "We could not read that request."),
    "unsupported_content_type": (415, "That content type is not supported."),
    "payload_too_large": (413, "That submission is too large."),
    "validation_failed": (422, "Please check the highlighted fields."),
    "unauthorized": (401, "This endpoint requires a valid API key."),
    "origin_not_allowed": (403, "This form does not accept submissions from that address."),
    "form_disabled": (403, "This form is not currently accepting submissions."),
    "form_not_found": (404, "This form does not exist."),
    "challenge_failed": (403, "We could not verify that submission. Please try again."),
    "rate_limited": (429, "Too many submissions. Please wait a moment and try again."),
    "quota_exceeded": (429, "This form has reached its submission limit."),
    "idempotency_conflict": (
        409,
        "That idempotency key was already used with a different submission.",
    ),
    "service_unavailable": (503, "We could not accept that submission. Please try again."),
}


def assert_error(response: httpx2.Response, code: str) -> dict[str, Any]:
    """The spec's envelope, exactly: the code's status, ok false, the code and its public
    message, the request id of the X-Request-ID header, `fields` only on
    validation_failed."""
    status, message = SPEC_ERRORS[code]
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert set(body) == ERROR_KEYS, body
    assert body["ok"] is False
    assert body["request_id"] == response.headers["x-request-id"]
    error = body["error"]
    assert error["code"] == code
    assert error["message"] == message
    if code == "validation_failed":
        assert set(error) == {"code", "message", "fields"}
        assert isinstance(error["fields"], dict)
        assert error["fields"]
    else:
        assert set(error) == {"code", "message"}
    return body
