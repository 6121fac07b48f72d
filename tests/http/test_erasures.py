"""POST /v1/erasures on every backend: a `manage` key erases every submission of its own
workspace that holds an address (reply-to or any field, whatever its case), answers the
receipt, and queues `submission.deleted` for each; a dry run lists what would go and
erases nothing. Every refusal answers in the spec's envelope and erases nothing. Beside
it: a form's `retention_days` through POST and PATCH /v1/forms, and the client address a
stored submission keeps."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from intake.config import Settings
from intake.domain.model import EventType, Scope
from intake.service.admin import CreatedKey
from tests.http.conftest import (
    Seeded,
    Service,
    ServiceFactory,
)
from tests.http.test_management_access import assert_refused

# Also on PostgreSQL (tests/http/conftest.py): erasure in batches, and what it leaves in
# the shards.
pytestmark = pytest.mark.postgres_smoke

ADA = "ada@example.com"


class People:
    """A workspace with two forms, keys of every scope, and another workspace."""

    def __init__(self, seeded: Seeded) -> None:
        self.svc = seeded.svc
        self.workspace_id = seeded.workspace.workspace_id
        self.form = seeded.form
        self.other_form = self.svc.form(self.workspace_id, name="Other")
        self.manager = self.key(Scope.MANAGE)
        self.reader = self.key(Scope.READ)
        self.submitter = self.key(Scope.SUBMIT)
        stranger = self.svc.workspace(name="Stranger")
        self.stranger_form = self.svc.form(stranger.workspace_id, name="Theirs")
        self.stranger = self.key(Scope.MANAGE, workspace_id=stranger.workspace_id)

    def key(self, *scopes: Scope, workspace_id: str | None = None) -> CreatedKey:
        created: CreatedKey = self.svc.run(
            self.svc.services.keys.create,
            workspace_id or self.workspace_id,
            scopes=frozenset(scopes),
        )
        return created

    def send(self, public_key: str, body: dict[str, Any]) -> str:
        answer = self.svc.public(public_key, json=body)
        assert answer.status_code == 201, answer.text
        submission_id: str = answer.json()["submission_id"]
        return submission_id

    def erase(self, body: Any, key: CreatedKey | None = None, **kwargs: Any) -> httpx2.Response:
        headers = {} if key is None else {"authorization": f"Bearer {key.secret}"}
        headers |= kwargs.pop("headers", {})
        if body is not None:
            kwargs["json"] = body
        return self.svc.client.post("/v1/erasures", headers=headers, **kwargs)

    def stored(self) -> set[str]:
        return {
            s.submission_id
            for form in (self.form, self.other_form, self.stranger_form)
            for s in self.svc.submissions(form.form_id)
        }


@pytest.fixture
def people(seeded: Seeded) -> People:
    return People(seeded)


@pytest.fixture
def sent(people: People) -> dict[str, str]:
    """Ada in a field, in another field's list in capitals, in an object in a list, and as
    a reply-to; Bob; and Ada in another workspace."""
    return {
        "field": people.send(people.form.public_form_key, {"email": ADA, "name": "Ada"}),
        "nested": people.send(
            people.other_form.public_form_key, {"who": {"emails": ["ADA@Example.com"]}}
        ),
        # An object inside a list: a form's list of contacts.
        "in_list": people.send(
            people.form.public_form_key, {"contacts": [{"name": "A", "email": ADA}]}
        ),
        "reply_to": people.send(people.form.public_form_key, {"_replyto": ADA, "n": "1"}),
        "bob": people.send(people.form.public_form_key, {"email": "bob@example.com"}),
        "stranger": people.send(people.stranger_form.public_form_key, {"email": ADA}),
    }


def test_an_erasure_takes_every_submission_holding_the_address_and_gives_a_receipt(
    people: People, sent: dict[str, str]
) -> None:
    answer = people.erase({"email": " Ada@EXAMPLE.com "}, people.manager)

    assert answer.status_code == 200, answer.text
    receipt = answer.json()
    ada = sorted([sent["field"], sent["nested"], sent["in_list"], sent["reply_to"]])
    assert receipt["workspace_id"] == people.workspace_id
    assert receipt["dry_run"] is False
    assert receipt["count"] == 4
    assert sorted(s["submission_id"] for s in receipt["submissions"]) == ada
    assert {f["form_id"]: f["count"] for f in receipt["forms"]} == {
        people.form.form_id: 3,
        people.other_form.form_id: 1,
    }
    assert ADA not in answer.text.lower()  # the receipt holds no erased value
    assert people.stored() == {sent["bob"], sent["stranger"]}
    deleted = [
        row.event.submission_id
        for row in people.svc.run(people.svc.store.submissions.outbox, 1000)
        if row.event.event_type is EventType.DELETED
    ]
    assert sorted(deleted) == ada

    again = people.erase({"email": ADA}, people.manager)
    assert again.status_code == 200
    assert again.json()["count"] == 0


def test_a_dry_run_lists_what_would_go_and_erases_nothing(
    people: People, sent: dict[str, str]
) -> None:
    before = people.stored()

    answer = people.erase({"email": ADA, "dry_run": True}, people.manager)

    assert answer.status_code == 200, answer.text
    receipt = answer.json()
    assert receipt["dry_run"] is True
    assert receipt["count"] == 4
    [first] = [s for s in receipt["submissions"] if s["submission_id"] == sent["field"]]
    assert first["form_id"] == people.form.form_id
    assert first["created_at"]
    assert people.stored() == before


@pytest.mark.parametrize(
    ("who", "code"),
    [("nobody", "unauthorized"), ("reader", "forbidden"), ("submitter", "forbidden")],
)
def test_a_key_without_manage_erases_nothing(
    people: People, sent: dict[str, str], who: str, code: str
) -> None:
    before = people.stored()
    key = {"nobody": None, "reader": people.reader, "submitter": people.submitter}[who]

    assert_refused(people.erase({"email": ADA}, key), code)

    assert people.stored() == before


def test_another_workspaces_key_erases_only_its_own(people: People, sent: dict[str, str]) -> None:
    answer = people.erase({"email": ADA}, people.stranger)

    assert answer.status_code == 200, answer.text
    assert [s["submission_id"] for s in answer.json()["submissions"]] == [sent["stranger"]]
    assert sent["field"] in people.stored()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "not an address"}, "email"),
        ({"email": ""}, "email"),
        ({}, "email"),
        ({"email": None}, "email"),
        ({"email": 7}, "email"),
        ({"email": ADA, "dry_run": "yes"}, "dry_run"),
        ({"email": ADA, "everyone": True}, "everyone"),
        ({"email": "a" * 400 + "@example.com"}, "email"),
    ],
)
def test_a_bad_body_is_refused_naming_its_field(
    people: People, sent: dict[str, str], body: dict[str, Any], field: str
) -> None:
    before = people.stored()

    refused = people.erase(body, people.manager)

    assert refused.status_code == 422, refused.text
    assert set(refused.json()["error"]["fields"]) == {field}
    assert people.stored() == before


def test_a_body_that_is_not_json_is_refused(people: People) -> None:
    assert_refused(people.erase(None, people.manager, content=b"{"), "unsupported_content_type")
    not_json = people.erase(
        None, people.manager, content=b"{", headers={"content-type": "application/json"}
    )
    assert_refused(not_json, "malformed_request")


# -- a form's retention through the API ---------------------------------------------------


def test_a_forms_retention_is_set_shown_and_cleared(people: People) -> None:
    headers = {"authorization": f"Bearer {people.manager.secret}"}
    created = people.svc.client.post(
        "/v1/forms", headers=headers, json={"name": "Kept", "retention_days": 90}
    )
    assert created.status_code == 201, created.text
    assert created.json()["retention_days"] == 90
    path = f"/v1/forms/{created.json()['form_id']}"

    assert (
        people.svc.client.patch(path, headers=headers, json={"name": "K"}).json()["retention_days"]
        == 90
    )
    cleared = people.svc.client.patch(path, headers=headers, json={"retention_days": None})
    assert cleared.json()["retention_days"] is None
    assert people.svc.client.get(path, headers=headers).json()["retention_days"] is None


@pytest.mark.parametrize("days", [0, -1, 3651, 1.5, "30", True])
def test_a_retention_out_of_range_is_refused(people: People, days: object) -> None:
    headers = {"authorization": f"Bearer {people.manager.secret}"}
    path = f"/v1/forms/{people.form.form_id}"

    refused = people.svc.client.patch(path, headers=headers, json={"retention_days": days})

    assert refused.status_code == 422, refused.text
    assert set(refused.json()["error"]["fields"]) == {"retention_days"}
    assert people.svc.run(people.svc.services.forms.get, people.form.form_id).retention_days is None


# -- the client address a submission keeps -----------------------------------------------


@pytest.mark.parametrize(
    ("setting", "peer", "kept"),
    [
        (None, "198.51.100.23", "198.51.100.0"),
        ("truncated", "2001:db8:1234:5678::9", "2001:db8:1234::"),
        ("full", "198.51.100.23", "198.51.100.23"),
        ("none", "198.51.100.23", None),
    ],
)
def test_a_stored_submission_keeps_the_address_as_configured(
    make_service: ServiceFactory, setting: str | None, peer: str, kept: str | None
) -> None:
    env = {} if setting is None else {"INTAKE_STORE_CLIENT_IP": setting}
    svc: Service = make_service(Settings.from_env(env))
    seeded = Seeded(svc)
    answer = svc.public(seeded.form.public_form_key, peer=peer, json={"n": "1"})

    assert answer.status_code == 201, answer.text
    stored = svc.submission(answer.json()["submission_id"])
    assert stored.client_ip == kept
