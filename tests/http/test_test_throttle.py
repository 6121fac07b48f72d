"""Test sends are throttled per destination: over the management API a second test to
one recipient, endpoint or chat destination within the minute is `429 rate_limited`, in
the API's own words, with Retry-After, and queues nothing; a minute on, one more goes.
The dashboard says so on the page."""

from __future__ import annotations

import httpx2
import pytest

from intake.domain.model import Scope
from intake.entrypoints.http.openapi import openapi_document
from intake.service.admin import ChatRequest
from tests.http.conftest import (
    Seeded,
    ServiceFactory,
)
from tests.http.dashboard_support import Dashboard

TOO_MANY = "Too many requests. Please wait a moment and try again."


class Owner:
    def __init__(self, seeded: Seeded) -> None:
        svc = self.svc = seeded.svc
        form_id = seeded.form.form_id
        key = svc.run(
            svc.services.keys.create,
            seeded.workspace.workspace_id,
            scopes=frozenset({Scope.MANAGE}),
        )
        self.headers = {"authorization": f"Bearer {key.secret}"}
        recipient = svc.run(svc.services.recipients.add, form_id, "owner@example.com")
        hook = svc.run(svc.services.webhooks.add, form_id, "https://hooks.example.com/x")
        chat = svc.run(
            svc.services.chats.add,
            form_id,
            ChatRequest(kind="slack", url="https://hooks.slack.com/services/T/B/x"),
        )
        self.tests = {
            "recipient": f"/v1/notifications/{recipient.recipient_id}/test",
            "webhook": f"/v1/webhooks/{hook.endpoint.endpoint_id}/test",
            "chat": f"/v1/destinations/{chat.destination_id}/test",
        }

    def send(self, kind: str) -> httpx2.Response:
        return self.svc.client.post(self.tests[kind], headers=self.headers)

    def queued(self) -> int:
        return len(self.svc.run(self.svc.store.deliveries.list_deliveries))


@pytest.fixture
def owner(seeded: Seeded) -> Owner:
    return Owner(seeded)


@pytest.mark.parametrize("kind", ["recipient", "webhook", "chat"])
def test_a_second_test_within_the_minute_is_refused_with_retry_after(
    owner: Owner, kind: str
) -> None:
    first = owner.send(kind)
    owner.svc.clock.advance(15)
    second = owner.send(kind)

    assert first.status_code == 202, first.text
    assert second.status_code == 429, second.text
    assert second.headers["retry-after"] == "45"
    assert second.json()["error"] == {"code": "rate_limited", "message": TOO_MANY}
    assert owner.queued() == 1

    owner.svc.clock.advance(45)
    assert owner.send(kind).status_code == 202
    assert owner.queued() == 2


@pytest.mark.parametrize(
    "path",
    [
        "/v1/notifications/{recipient_id}/test",
        "/v1/webhooks/{endpoint_id}/test",
        "/v1/destinations/{destination_id}/test",
    ],
)
def test_the_document_says_when_a_test_is_one_too_many(path: str) -> None:
    refused = openapi_document()["paths"][path]["post"]["responses"]["429"]

    assert "rate_limited: the destination had its tests for now" in refused["description"]
    assert "one a minute and five an hour" in refused["description"]
    assert refused["headers"]["Retry-After"]["required"] is True


def test_each_destination_is_throttled_on_its_own(owner: Owner) -> None:
    answers = [owner.send(kind) for kind in ("recipient", "webhook", "chat")]

    assert [a.status_code for a in answers] == [202, 202, 202]


def test_the_dashboard_says_when_the_next_test_may_go(make_service: ServiceFactory) -> None:
    dash = Dashboard(make_service())
    dash.owner_signs_in()
    svc = dash.svc
    recipient = svc.run(svc.services.recipients.add, dash.form.form_id, "team@example.com")
    path = f"/dashboard/forms/{dash.form.form_id}/settings/mail/test"

    first = dash.post(path, recipient=recipient.recipient_id)
    second = dash.post(path, recipient=recipient.recipient_id)

    assert first.status_code == 303
    assert second.status_code == 429
    assert "try again in 60 s" in second.text
    assert len(svc.run(svc.store.deliveries.list_deliveries)) == 1
