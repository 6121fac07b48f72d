"""A suspended workspace changes nothing and sends nothing: its keys and its owners in the
dashboard may read, but every change, test send and export is refused with 403 (the
API's `forbidden`, in words saying the workspace is suspended), and nothing changes. An
erasure on request still runs."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from intake.domain.model import Scope
from tests.http.conftest import (
    Seeded,
    ServiceFactory,
)
from tests.http.dashboard_support import Dashboard

SUSPENDED = "This workspace is suspended: it can change and send nothing."


class Suspended:
    """A workspace with a form, a recipient, a webhook and a manage key; then suspended."""

    def __init__(self, seeded: Seeded) -> None:
        svc = self.svc = seeded.svc
        self.workspace_id = seeded.workspace.workspace_id
        self.form_id = seeded.form.form_id
        key = svc.run(svc.services.keys.create, self.workspace_id, scopes=frozenset({Scope.MANAGE}))
        self.headers = {"authorization": f"Bearer {key.secret}"}
        self.recipient = svc.run(svc.services.recipients.add, self.form_id, "owner@example.com")
        self.endpoint = svc.run(
            svc.services.webhooks.add, self.form_id, "https://hooks.example.com/x"
        )
        svc.run(svc.services.workspaces.set_active, self.workspace_id, False)

    def request(self, method: str, path: str, **options: Any) -> httpx2.Response:
        return self.svc.client.request(method, path, headers=self.headers, **options)


@pytest.fixture
def suspended(seeded: Seeded) -> Suspended:
    return Suspended(seeded)


def _refused(answer: httpx2.Response) -> None:
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"] == {"code": "forbidden", "message": SUSPENDED}
    assert answer.json()["request_id"] == answer.headers["x-request-id"]


def test_a_suspended_workspaces_key_changes_nothing(suspended: Suspended) -> None:
    form = f"/v1/forms/{suspended.form_id}"
    answers = [
        suspended.request("POST", f"{form}/notifications", json={"email": "x@example.com"}),
        suspended.request("POST", f"{form}/webhooks", json={"url": "https://h.example.com/y"}),
        suspended.request("PATCH", form, json={"name": "URGENT: verify your account"}),
        suspended.request("POST", f"{form}/rotate-key"),
        suspended.request("POST", "/v1/forms", json={"name": "Another"}),
        suspended.request("DELETE", f"/v1/notifications/{suspended.recipient.recipient_id}"),
    ]

    for answer in answers:
        _refused(answer)
    svc = suspended.svc
    assert [r.email for r in svc.run(svc.services.recipients.all, suspended.form_id)] == [
        "owner@example.com"
    ]
    assert len(svc.run(svc.services.webhooks.all, suspended.form_id)) == 1
    assert svc.run(svc.services.forms.get, suspended.form_id).name == "Contact"
    assert len(svc.run(svc.services.forms.all, suspended.workspace_id)) == 1


def test_a_suspended_workspaces_key_sends_nothing(suspended: Suspended) -> None:
    recipient = suspended.recipient.recipient_id
    endpoint = suspended.endpoint.endpoint.endpoint_id

    answers = [
        suspended.request("POST", f"/v1/notifications/{recipient}/test"),
        suspended.request("POST", f"/v1/webhooks/{endpoint}/test"),
        suspended.request("GET", f"/v1/forms/{suspended.form_id}/export?format=csv"),
    ]

    for answer in answers:
        _refused(answer)
    svc = suspended.svc
    assert svc.run(svc.store.deliveries.list_deliveries) == []


def test_a_suspended_workspaces_key_still_reads_and_erases(suspended: Suspended) -> None:
    listed = suspended.request("GET", f"/v1/forms/{suspended.form_id}/notifications")
    erased = suspended.request("POST", "/v1/erasures", json={"email": "someone@example.com"})

    assert listed.status_code == 200, listed.text
    assert [r["email"] for r in listed.json()["data"]] == ["owner@example.com"]
    assert erased.status_code == 200, erased.text


def test_a_suspended_workspaces_owner_is_told_in_the_dashboard(
    make_service: ServiceFactory,
) -> None:
    dash = Dashboard(make_service())
    dash.owner_signs_in()
    svc, form_id = dash.svc, dash.form.form_id
    svc.run(svc.services.workspaces.set_active, dash.workspace.workspace_id, False)
    mail = f"/dashboard/forms/{form_id}/settings/mail"

    page = dash.client.get(mail)
    added = dash.post(mail, email="stranger@example.com")
    exported = dash.client.get(f"/dashboard/forms/{form_id}/export?format=csv")

    assert page.status_code == 200
    for refused in (added, exported):
        assert refused.status_code == 403
        assert "This workspace is suspended" in refused.text
    assert svc.run(svc.services.recipients.all, form_id) == []
