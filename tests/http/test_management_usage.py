"""GET /v1/usage: the workspace's month, as `intake workspace show` counts it, with each
form's share of the submissions charged and its filled honeypots."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from intake.domain.model import Plan, Scope
from intake.service.admin import FormChanges
from tests.http.conftest import Service

# Also on PostgreSQL (tests/http/conftest.py): the month's use summed over the quota's
# shards.
pytestmark = pytest.mark.postgres_smoke


class Workspace:
    def __init__(self, svc: Service, name: str, **options: Any) -> None:
        self.svc = svc
        self.workspace_id = svc.workspace(name=name, **options).workspace_id
        self.submitter = self._key(Scope.SUBMIT)
        self.reader = self._key(Scope.READ)

    def _key(self, scope: Scope) -> str:
        created = self.svc.run(
            self.svc.services.keys.create, self.workspace_id, scopes=frozenset({scope})
        )
        return created.secret

    def form(self) -> str:
        return self.svc.form(self.workspace_id).form_id

    def submit(self, form_id: str, count: int = 1, **extra: str) -> None:
        for n in range(count):
            answer = self.svc.server(form_id, self.submitter, json={"message": f"{n}", **extra})
            assert answer.status_code == 201, answer.text

    def usage(self) -> dict[str, Any]:
        response = self.svc.client.get(
            "/v1/usage", headers={"authorization": f"Bearer {self.reader}"}
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


def test_usage_gives_the_month_and_each_forms_share(svc: Service) -> None:
    acme = Workspace(svc, "Acme")
    busy, quiet = acme.form(), acme.form()
    other = Workspace(svc, "Other")
    other.submit(other.form(), 2)
    acme.submit(busy, 3)
    acme.submit(quiet, 1)
    acme.submit(busy, 2, _gotcha="bot")  # honeypot hits: answered 201, never charged

    usage = acme.usage()

    assert usage == {
        "workspace_id": acme.workspace_id,
        "plan": "free",
        "period": "2026-01",
        "used": 4,
        "limit": 50,
        "ceiling": 50,
        "forms": sorted(
            [
                {"form_id": busy, "used": 3, "honeypot_hits": 2},
                {"form_id": quiet, "used": 1, "honeypot_hits": 0},
            ],
            key=lambda form: str(form["form_id"]),
        ),
    }
    assert usage["used"] == svc.used(acme.workspace_id)


def test_a_spam_submission_is_not_charged(svc: Service) -> None:
    acme = Workspace(svc, "Acme")
    form_id = acme.form()
    # Any content scores above so low a threshold: every submission is spam.
    svc.update_form(form_id, spam_threshold=1e-9)
    acme.submit(form_id, 2, message="Buy now http://spam.example.com http://spam.example.net")

    usage = acme.usage()

    stored = svc.submissions(form_id)
    assert {s.status.value for s in stored} == {"spam"}
    assert usage["used"] == 0
    assert usage["forms"] == [{"form_id": form_id, "used": 0, "honeypot_hits": 0}]


def test_a_new_month_starts_from_nothing(svc: Service) -> None:
    acme = Workspace(svc, "Acme", plan=Plan.STARTER, monthly_limit=30)
    form_id = acme.form()
    acme.submit(form_id, 2)
    acme.submit(form_id, 1, _gotcha="bot")

    svc.clock.set(datetime(2026, 2, 1, 0, 0, 1, tzinfo=UTC))
    usage = acme.usage()

    assert (usage["period"], usage["used"], usage["limit"], usage["ceiling"]) == (
        "2026-02",
        0,
        30,
        60,  # starter has overage: twice the limit
    )
    assert usage["forms"] == [{"form_id": form_id, "used": 0, "honeypot_hits": 0}]


@pytest.mark.parametrize("scope", [Scope.READ, Scope.MANAGE])
def test_a_read_or_manage_key_reads_usage(svc: Service, scope: Scope) -> None:
    acme = Workspace(svc, "Acme")
    key = svc.run(svc.services.keys.create, acme.workspace_id, scopes=frozenset({scope}))

    response = svc.client.get("/v1/usage", headers={"authorization": f"Bearer {key.secret}"})

    assert response.status_code == 200
    assert response.json()["forms"] == []


def test_a_paused_forms_month_is_still_shown(svc: Service) -> None:
    acme = Workspace(svc, "Acme")
    form_id = acme.form()
    acme.submit(form_id, 2)
    svc.run(svc.services.forms.update, form_id, FormChanges(enabled=False))

    assert acme.usage()["forms"] == [{"form_id": form_id, "used": 2, "honeypot_hits": 0}]
