"""Refusals of requests that are no submission speak of the request, never of a
submission: the management API's 413 and 503 (docs/api.md, "Errors"), and the 503 of
a dashboard page the service could not answer. A submission's own 503 keeps the
table's words (tests/http/test_operations.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import httpx2
import pytest

from intake.domain.model import Form, Scope
from intake.domain.signing import DOWNLOAD_PATH
from intake.entrypoints.http.middleware import SERVER_ROUTE
from intake.ports.forms import FormContext, FormRepository
from intake.service.admin import CreatedKey
from tests.http.conftest import (
    MANAGEMENT_WORDS,
    Seeded,
    Service,
    ServiceFactory,
    assert_management_error,
)
from tests.http.dashboard_support import Dashboard

_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head"})
UNANSWERED = "We could not answer that request. Please try again."


@pytest.fixture
def manager(seeded: Seeded) -> CreatedKey:
    return seeded.svc.run(
        seeded.svc.services.keys.create,
        seeded.workspace.workspace_id,
        scopes=frozenset({Scope.MANAGE}),
    )


def bearer(key: CreatedKey) -> dict[str, str]:
    return {"authorization": f"Bearer {key.secret}"}


def test_the_management_api_out_of_its_database_says_it_could_not_answer(
    seeded: Seeded, manager: CreatedKey
) -> None:
    seeded.svc.run(seeded.svc.store.close)

    response = seeded.svc.client.get("/v1/forms", headers=bearer(manager))

    body = assert_management_error(response, "service_unavailable")
    assert body["error"]["message"] == UNANSWERED
    assert int(response.headers["retry-after"]) >= 1


def test_a_management_body_too_large_is_a_request_too_large(
    seeded: Seeded, manager: CreatedKey
) -> None:
    response = seeded.svc.client.patch(
        f"/v1/forms/{seeded.form.form_id}",
        content=b'{"name": "' + b"x" * (300 * 1024) + b'"}',
        headers={**bearer(manager), "content-type": "application/json"},
    )

    body = assert_management_error(response, "payload_too_large")
    assert body["error"]["message"] == "That request is too large."


class _FailingList:
    """A form repository whose listing fails with an error nobody planned for."""

    def __init__(self, inner: FormRepository) -> None:
        self._inner = inner

    async def add(self, form: Form) -> None:
        await self._inner.add(form)

    async def get(self, form_id: str) -> Form | None:
        return await self._inner.get(form_id)

    async def update(self, form: Form) -> None:
        await self._inner.update(form)

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        raise RuntimeError("a fault of ours")

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return await self._inner.resolve_public_key(public_form_key)

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return await self._inner.resolve_id(form_id)

    async def mark_deleted(self, form_id: str, at: datetime) -> bool:
        return await self._inner.mark_deleted(form_id, at)

    async def deleted(self, after: str, limit: int) -> Sequence[str]:
        return await self._inner.deleted(after, limit)

    async def remove_deleted(self, form_id: str) -> bool:
        return await self._inner.remove_deleted(form_id)


def test_a_fault_on_a_management_route_says_it_could_not_answer(
    seeded: Seeded, manager: CreatedKey
) -> None:
    seeded.svc.store.forms = _FailingList(seeded.svc.store.forms)

    response = seeded.svc.client.get("/v1/forms", headers=bearer(manager))

    assert_management_error(response, "service_unavailable")
    assert int(response.headers["retry-after"]) >= 1


def _messages(schema: dict[str, Any]) -> list[str]:
    if "oneOf" in schema:
        return [m for option in schema["oneOf"] for m in _messages(option)]
    return [schema["properties"]["error"]["properties"]["message"]["const"]]


def test_no_refusal_of_the_management_api_speaks_of_a_submission(svc: Service) -> None:
    # Every refusal every management operation can answer, as /openapi.json describes
    # it (and the suite checks every answer against it).
    paths = svc.client.get("/openapi.json").json()["paths"]
    management = {
        path: operations
        for path, operations in paths.items()
        if path.startswith("/v1/") and path not in (SERVER_ROUTE, DOWNLOAD_PATH)
    }
    messages = {
        (status, message)
        for operations in management.values()
        for method, operation in operations.items()
        if method in _METHODS
        for status, answer in operation["responses"].items()
        if int(status) >= 400
        for message in _messages(answer["content"]["application/json"]["schema"])
    }

    assert {s for s, _ in messages} >= {"401", "403", "404", "413", "422", "429", "503"}
    assert [m for _, m in messages if "submission" in m.lower()] == []
    assert ("503", MANAGEMENT_WORDS["service_unavailable"][1]) in messages


def _paragraphs(page: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", page).split())


def test_a_dashboard_page_out_of_its_database_says_it_could_not_answer(
    make_service: ServiceFactory,
) -> None:
    dash = Dashboard(make_service())
    dash.owner_signs_in()
    dash.svc.run(dash.svc.store.close)

    response: httpx2.Response = dash.client.get("/dashboard", headers={"accept": "text/html"})

    assert response.status_code == 503
    assert response.headers["content-type"].startswith("text/html")
    assert UNANSWERED in _paragraphs(response.text)
    assert "submission" not in response.text.lower()
