"""A form's destinations are bounded by the operator's settings: over the management API,
one recipient, webhook or chat destination past the bound is a 422 naming the field,
saying why, and adds nothing."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from intake.config.settings import Settings
from intake.domain.destination_limits import DestinationLimits
from intake.domain.model import Scope
from tests.http.conftest import (
    Seeded,
    ServiceFactory,
    assert_error,
)
from tests.http.dashboard_support import Dashboard

BOUND = 2
SLACK = "https://hooks.slack.com/services/T000/B000/{n}"


class Owner:
    def __init__(self, make_service: ServiceFactory) -> None:
        limits = DestinationLimits(recipients=BOUND, webhooks=BOUND, chats=BOUND)
        seeded = Seeded(make_service(Settings(destination_limits=limits)))
        self.svc = seeded.svc
        self.form_id = seeded.form.form_id
        key = self.svc.run(
            self.svc.services.keys.create,
            seeded.workspace.workspace_id,
            scopes=frozenset({Scope.MANAGE}),
        )
        self.headers = {"authorization": f"Bearer {key.secret}"}

    def post(self, path: str, body: dict[str, Any]) -> httpx2.Response:
        return self.svc.client.post(path, headers=self.headers, json=body)

    def listed(self, path: str) -> int:
        return len(self.svc.client.get(path, headers=self.headers).json()["data"])


@pytest.fixture
def owner(make_service: ServiceFactory) -> Owner:
    return Owner(make_service)


# Each kind: its collection under the form, one body per n, the field a refusal names.
KINDS = pytest.mark.parametrize(
    ("collection", "body", "field", "variable"),
    [
        (
            "notifications",
            lambda n: {"email": f"person{n}@example.com"},
            "email",
            "INTAKE_MAX_RECIPIENTS_PER_FORM",
        ),
        (
            "webhooks",
            lambda n: {"url": f"https://hooks.example.com/{n}"},
            "url",
            "INTAKE_MAX_WEBHOOKS_PER_FORM",
        ),
        (
            "destinations",
            lambda n: {"kind": "slack", "url": SLACK.format(n=n)},
            "kind",
            "INTAKE_MAX_CHAT_DESTINATIONS_PER_FORM",
        ),
    ],
    ids=["recipients", "webhooks", "chats"],
)


@KINDS
def test_one_destination_past_the_bound_is_refused_naming_the_field(
    owner: Owner, collection: str, body: Any, field: str, variable: str
) -> None:
    path = f"/v1/forms/{owner.form_id}/{collection}"
    for n in range(BOUND):
        answer = owner.post(path, body(n))
        assert answer.status_code == 201, answer.text

    refused = owner.post(path, body(BOUND))

    found = assert_error(refused, "validation_failed")
    message = found["error"]["fields"][field]
    assert f"this form has {BOUND}" in message
    assert variable in message
    assert owner.listed(path) == BOUND


def test_the_dashboard_says_the_form_has_as_many_as_it_may(make_service: ServiceFactory) -> None:
    limits = DestinationLimits(recipients=BOUND, webhooks=BOUND, chats=BOUND)
    dash = Dashboard(make_service(Settings(destination_limits=limits)))
    dash.owner_signs_in()
    page = f"/dashboard/forms/{dash.form.form_id}/settings/mail"
    for n in range(BOUND):
        assert dash.post(page, email=f"person{n}@example.com").status_code == 303

    refused = dash.post(page, email="one.more@example.com")

    assert refused.status_code == 422
    assert f"this form has {BOUND} notification recipients" in refused.text
    assert 'value="one.more@example.com"' in refused.text  # kept, to add once one is removed
    assert len(dash.svc.run(dash.svc.services.recipients.all, dash.form.form_id)) == BOUND
