"""DELETE /v1/forms/{form_id} and POST /v1/forms/{form_id}/duplicate on every backend: a
deleted form answers 404 at once, on /v1 and on its public key, its submissions are
erased with a `submission.deleted` each, and the month's usage is kept; a duplicate has
the original's settings, a key of its own and nothing else. Another workspace's form is
not found; a read key is refused."""

from __future__ import annotations

import pytest

from intake.domain.model import EventType
from tests.http.conftest import Service, assert_error
from tests.http.test_management_access import assert_refused
from tests.http.test_management_forms import Owner

# Also on PostgreSQL (tests/http/conftest.py): a deleted or duplicated form reaching the
# form cache (LISTEN/NOTIFY).
pytestmark = pytest.mark.postgres_smoke

SITE = "https://www.example.com"


@pytest.fixture
def owner(svc: Service) -> Owner:
    return Owner(svc)


def submitted(owner: Owner, form: dict[str, object], count: int) -> list[str]:
    ids = []
    for n in range(count):
        answer = owner.svc.public(
            str(form["public_form_key"]), origin=SITE, json={"message": f"Hello {n}"}
        )
        assert answer.status_code in (200, 201), answer.text
        ids.append(str(answer.json()["submission_id"]))
    return ids


def test_a_deleted_form_is_not_found_and_its_submissions_are_erased(owner: Owner) -> None:
    svc = owner.svc
    form = owner.create(allowed_origins=[SITE])
    form_id = str(form["form_id"])
    webhook = owner.send(
        "POST", f"/v1/forms/{form_id}/webhooks", {"url": "https://hooks.example.com/x"}
    )
    assert webhook.status_code == 201, webhook.text
    submission_ids = submitted(owner, form, 2)
    used = svc.used(owner.workspace_id)

    answer = owner.send("DELETE", f"/v1/forms/{form_id}")

    assert answer.status_code == 204, answer.text
    assert answer.content == b""
    assert_refused(owner.get(f"/v1/forms/{form_id}"), "not_found")
    assert_refused(owner.send("DELETE", f"/v1/forms/{form_id}"), "not_found")
    assert_refused(owner.get(f"/v1/submissions/{submission_ids[0]}"), "not_found")
    listed = owner.get("/v1/forms").json()["data"]
    assert form_id not in [f["form_id"] for f in listed]
    gone = svc.public(str(form["public_form_key"]), origin=SITE, json={"message": "late"})
    assert_error(gone, "form_not_found")
    for submission_id in submission_ids:
        events = [row.event.event_type for row in svc.outbox(submission_id)]
        assert EventType.DELETED in events
    assert svc.used(owner.workspace_id) == used, "the month's usage is not given back"


def test_another_workspaces_form_is_not_found_and_a_read_key_is_refused(
    owner: Owner,
) -> None:
    form_id = str(owner.create()["form_id"])
    stranger = Owner(owner.svc, name="Other")

    assert_refused(stranger.send("DELETE", f"/v1/forms/{form_id}"), "not_found")
    assert_refused(stranger.send("POST", f"/v1/forms/{form_id}/duplicate", {}), "not_found")
    read_only = owner.svc.client.delete(f"/v1/forms/{form_id}", headers=owner.read)
    assert_refused(read_only, "forbidden")
    assert owner.get(f"/v1/forms/{form_id}").status_code == 200


def test_a_duplicate_has_the_settings_a_key_of_its_own_and_no_submission(
    owner: Owner,
) -> None:
    form = owner.create(
        allowed_origins=[SITE], redirect_url="https://www.example.com/thanks", spam_threshold=3.5
    )
    form_id = str(form["form_id"])
    submitted(owner, form, 1)

    answer = owner.send("POST", f"/v1/forms/{form_id}/duplicate", {})

    assert answer.status_code == 201, answer.text
    copy = answer.json()
    assert copy["name"] == "Contact (copy)"
    assert copy["form_id"] != form_id
    assert copy["public_form_key"] != form["public_form_key"]
    for setting in ("mode", "allowed_origins", "redirect_url", "spam_threshold", "rules"):
        assert copy[setting] == form[setting], setting
    assert owner.get(f"/v1/forms/{copy['form_id']}/submissions").json()["data"] == []
    named = owner.send("POST", f"/v1/forms/{form_id}/duplicate", {"name": "Careers"})
    assert named.json()["name"] == "Careers"


def test_a_duplicate_with_a_bad_name_is_refused_naming_it(owner: Owner) -> None:
    form_id = str(owner.create()["form_id"])

    answer = owner.send("POST", f"/v1/forms/{form_id}/duplicate", {"name": "  "})

    assert assert_error(answer, "validation_failed")["error"]["fields"] == {
        "name": "a form's name cannot be empty"
    }
    unknown = owner.send("POST", f"/v1/forms/{form_id}/duplicate", {"colour": "red"})
    assert "colour" in assert_error(unknown, "validation_failed")["error"]["fields"]
