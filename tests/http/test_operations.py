"""Operational answers: request ids, health and readiness, unknown routes, and faults of
our own (decisions.md "Identity, keys and ids")."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import datetime

import httpx2
import pytest

from intake.domain.model import Form
from intake.ports.forms import FormContext, FormRepository
from tests.http.conftest import Seeded, Service, assert_error, assert_error_shape

FIELDS = {"name": "Ada"}
SECRET_DETAIL = "database password is hunter2"


def test_every_answer_carries_a_fresh_request_id(seeded: Seeded) -> None:
    answers = [
        seeded.svc.client.get("/healthz"),
        seeded.svc.client.get("/readyz"),
        seeded.svc.client.get("/openapi.json"),
        seeded.svc.client.get("/no/such/path"),
        seeded.svc.client.get(f"/f/{seeded.form.public_form_key}"),
        seeded.svc.client.delete("/healthz"),
        seeded.svc.client.options(f"/f/{seeded.form.public_form_key}"),
        seeded.svc.client.get(f"/f/{seeded.form.public_form_key}/thanks"),
        seeded.svc.public(seeded.form.public_form_key, data=FIELDS),
        seeded.svc.server(seeded.form.form_id, seeded.key.secret, data=FIELDS),
    ]

    ids = [a.headers["x-request-id"] for a in answers]
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{8,}", i) for i in ids), ids
    assert len(set(ids)) == len(ids)


def test_the_request_id_of_a_client_is_not_taken_over(seeded: Seeded) -> None:
    response = seeded.svc.client.get("/healthz", headers={"x-request-id": "<script>"})

    assert response.headers["x-request-id"] != "<script>"


def test_healthz_answers_200(svc: Service) -> None:
    response = svc.client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"ok": True}


def test_readyz_answers_200_while_the_store_serves(svc: Service) -> None:
    response = svc.client.get("/readyz")

    assert response.status_code == 200
    # Without INTAKE_REDIS_URL each process keeps its own windows, by design.
    assert response.json() == {"ok": True, "rate_limits": "process"}


def test_readyz_answers_503_in_the_envelope_once_the_store_is_closed(svc: Service) -> None:
    svc.run(svc.store.close)

    response = svc.client.get("/readyz")

    # The envelope and the code's status, in words of its own: no submission was refused.
    body = assert_error_shape(response, "service_unavailable")
    assert body["error"]["message"] == "The service is not ready yet. Please try again shortly."
    assert int(response.headers["retry-after"]) >= 1


def test_an_unknown_path_answers_in_the_envelope(svc: Service) -> None:
    response = svc.client.post("/submit", data=FIELDS)

    body = assert_error(response, "form_not_found")
    assert body["request_id"] == response.headers["x-request-id"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/f/somekey"),
        ("PUT", "/f/somekey"),
        ("PUT", "/v1/forms/frm_x/submissions"),
        ("POST", "/healthz"),
        ("POST", "/f/somekey/thanks"),
    ],
)
def test_a_wrong_method_answers_405_in_the_envelope(svc: Service, method: str, path: str) -> None:
    response = svc.client.request(method, path)

    assert response.status_code == 405
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["ok"] is False
    assert body["request_id"] == response.headers["x-request-id"]
    assert set(body["error"]) == {"code", "message"}
    assert response.headers["allow"]


def test_the_allow_header_of_the_public_path_lists_every_method(svc: Service) -> None:
    response = svc.client.get("/f/somekey")

    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    assert {"POST", "OPTIONS"} <= allowed


class _ExplodingForms:
    """A form repository whose public-key lookup fails with an error nobody planned for;
    everything else it asks of the backend's own."""

    def __init__(self, inner: FormRepository) -> None:
        self._inner = inner

    async def add(self, form: Form) -> None:
        await self._inner.add(form)

    async def get(self, form_id: str) -> Form | None:
        return await self._inner.get(form_id)

    async def update(self, form: Form) -> None:
        await self._inner.update(form)

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        return await self._inner.list(workspace_id)

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        raise RuntimeError(SECRET_DETAIL)

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return await self._inner.resolve_id(form_id)

    async def mark_deleted(self, form_id: str, at: datetime) -> bool:
        return await self._inner.mark_deleted(form_id, at)

    async def deleted(self, after: str, limit: int) -> Sequence[str]:
        return await self._inner.deleted(after, limit)

    async def remove_deleted(self, form_id: str) -> bool:
        return await self._inner.remove_deleted(form_id)


@pytest.fixture
def exploding(seeded: Seeded) -> Seeded:
    seeded.svc.store.forms = _ExplodingForms(seeded.svc.store.forms)
    return seeded


def test_an_unexpected_fault_is_a_503_envelope_without_a_trace(
    exploding: Seeded, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="intake.http"):
        response = exploding.svc.public(exploding.form.public_form_key, data=FIELDS)

    assert_error(response, "service_unavailable")
    assert int(response.headers["retry-after"]) >= 1
    _assert_no_detail(response)
    assert response.headers["x-request-id"] in caplog.text or any(
        getattr(r, "request_id", None) == response.headers["x-request-id"] for r in caplog.records
    )


def test_an_unexpected_fault_shows_a_browser_a_page_without_a_trace(exploding: Seeded) -> None:
    response = exploding.svc.public(
        exploding.form.public_form_key, data=FIELDS, headers={"accept": "text/html"}
    )

    assert response.status_code == 503
    assert response.headers["content-type"].startswith("text/html")
    _assert_no_detail(response)


def test_an_unexpected_fault_on_the_public_endpoint_still_echoes_the_origin(
    exploding: Seeded,
) -> None:
    response = exploding.svc.public(
        exploding.form.public_form_key, data=FIELDS, origin="https://page.example"
    )

    assert response.status_code == 503
    assert response.headers["access-control-allow-origin"] == "https://page.example"


def test_the_server_endpoint_survives_the_same_store(exploding: Seeded) -> None:
    response = exploding.svc.server(exploding.form.form_id, exploding.key.secret, data=FIELDS)

    assert response.status_code == 201


def _assert_no_detail(response: httpx2.Response) -> None:
    for leak in (SECRET_DETAIL, "Traceback", "RuntimeError", 'File "', ".py"):
        assert leak not in response.text
