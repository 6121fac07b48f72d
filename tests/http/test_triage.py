"""PATCH and DELETE /v1/submissions/{submission_id} on every backend: a release charges the
month and queues one `submission.created`; marking spam queues nothing; a deletion erases
the submission and its files, answers 204, and the id is then not found. Every refusal
answers in the spec's envelope and changes nothing."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from intake.domain.model import EventType, Scope, SubmissionStatus
from intake.ports.blobs import BlobNotFound
from intake.service.admin import CreatedKey
from tests.http.conftest import Seeded, Service, assert_error
from tests.http.test_management_access import assert_refused
from tests.http.test_uploads import Uploads, pdf

# Also on PostgreSQL (tests/http/conftest.py): triage in one transaction against
# concurrent triage, a release charging the quota.
pytestmark = pytest.mark.postgres_smoke

SPAM, ACCEPTED = SubmissionStatus.SPAM, SubmissionStatus.ACCEPTED
SITE = "https://example.com/"


class Triage:
    """A workspace with a form whose every submission is spam, and keys for it."""

    def __init__(self, seeded: Seeded) -> None:
        self.svc = seeded.svc
        self.workspace_id = seeded.workspace.workspace_id
        self.form = self.svc.update_form(seeded.form.form_id, spam_threshold=0.001)
        self.manager = self.key(Scope.MANAGE)
        self.submitter = self.key(Scope.SUBMIT)

    def key(self, *scopes: Scope, workspace_id: str | None = None) -> CreatedKey:
        created: CreatedKey = self.svc.run(
            self.svc.services.keys.create,
            workspace_id or self.workspace_id,
            scopes=frozenset(scopes),
        )
        return created

    def submit(self, **data: str) -> str:
        """A submission the form scores as spam: a link scores above its threshold."""
        answer = self.svc.server(
            self.form.form_id, self.submitter.secret, json={**data, "site": SITE}
        )
        assert answer.status_code == 201, answer.text
        submission_id: str = answer.json()["submission_id"]
        return submission_id

    def patch(
        self, submission_id: str, body: Any = None, key: CreatedKey | None = None, **kwargs: Any
    ) -> httpx2.Response:
        if body is not None:
            kwargs["json"] = body
        headers = {**self.bearer(key), **kwargs.pop("headers", {})}
        return self.svc.client.patch(f"/v1/submissions/{submission_id}", headers=headers, **kwargs)

    def delete(self, submission_id: str, key: CreatedKey | None = None) -> httpx2.Response:
        return self.svc.client.delete(f"/v1/submissions/{submission_id}", headers=self.bearer(key))

    def bearer(self, key: CreatedKey | None) -> dict[str, str]:
        return {"authorization": f"Bearer {(key or self.manager).secret}"}

    def state(self, submission_id: str) -> tuple[object, ...]:
        svc = self.svc
        return (
            svc.run(svc.store.submissions.get, submission_id),
            svc.outbox(submission_id),
            svc.used(self.workspace_id),
        )


@pytest.fixture
def triage(seeded: Seeded) -> Triage:
    return Triage(seeded)


def test_a_release_accepts_charges_once_and_queues_one_created_event(triage: Triage) -> None:
    svc = triage.svc
    submission_id = triage.submit(message="hello", email="ada@example.com")
    assert svc.submission(submission_id).status is SPAM
    assert svc.used(triage.workspace_id) == 0

    first = triage.patch(submission_id, {"status": "accepted"})
    again = triage.patch(submission_id, {"status": "accepted"})

    assert first.status_code == 200, first.text
    assert first.json()["submission_id"] == submission_id
    assert first.json()["status"] == "accepted"
    assert first.json()["data"] == {"message": "hello", "email": "ada@example.com", "site": SITE}
    assert again.status_code == 200
    assert again.json() == first.json()
    assert svc.submission(submission_id).status is ACCEPTED
    assert svc.used(triage.workspace_id) == 1
    events = [row.event for row in svc.outbox(submission_id)]
    assert sorted(e.event_type for e in events) == [EventType.CREATED, EventType.FLAGGED]
    created = next(e for e in events if e.event_type is EventType.CREATED)
    assert created.payload["status"] == "accepted"
    assert created.payload["data"] == {"message": "hello", "email": "ada@example.com", "site": SITE}


def test_marking_spam_queues_nothing_and_keeps_the_usage(triage: Triage) -> None:
    svc = triage.svc
    submission_id = triage.submit()
    triage.patch(submission_id, {"status": "accepted"})
    events = svc.outbox(submission_id)

    response = triage.patch(submission_id, {"status": "spam"})

    assert response.status_code == 200, response.text
    assert response.json()["status"] == "spam"
    assert svc.submission(submission_id).status is SPAM
    assert svc.outbox(submission_id) == events
    assert svc.used(triage.workspace_id) == 1


def test_a_slip_marked_spam_then_released_again_queues_no_second_created_event(
    triage: Triage,
) -> None:
    # Released, marked as spam by mistake, released again: receivers got its
    # submission.created once, and get nothing more; the month is charged once.
    svc = triage.svc
    submission_id = triage.submit(message="hello")
    assert triage.patch(submission_id, {"status": "accepted"}).status_code == 200
    queued = svc.outbox(submission_id)

    slipped = triage.patch(submission_id, {"status": "spam"})
    again = triage.patch(submission_id, {"status": "accepted"})

    assert slipped.status_code == 200, slipped.text
    assert again.status_code == 200, again.text
    assert again.json()["status"] == "accepted"
    assert svc.submission(submission_id).status is ACCEPTED
    assert svc.outbox(submission_id) == queued
    events = [row.event.event_type for row in queued]
    assert sorted(events) == [EventType.CREATED, EventType.FLAGGED]
    assert svc.used(triage.workspace_id) == 1


def test_a_deletion_erases_the_submission_and_then_it_is_not_found(triage: Triage) -> None:
    svc = triage.svc
    submission_id = triage.submit(message="forget me")

    response = triage.delete(submission_id)

    assert response.status_code == 204
    assert response.content == b""
    assert svc.run(svc.store.submissions.get, submission_id) is None
    events = [row.event for row in svc.outbox(submission_id)]
    assert sorted(e.event_type for e in events) == [EventType.DELETED, EventType.FLAGGED]
    assert all("forget me" not in repr(e.payload) for e in events)
    assert_refused(triage.delete(submission_id), "not_found")
    assert_refused(triage.patch(submission_id, {"status": "accepted"}), "not_found")
    assert_refused(
        svc.client.get(f"/v1/submissions/{submission_id}", headers=triage.bearer(None)),
        "not_found",
    )


def test_after_a_deletion_its_idempotency_key_makes_a_new_submission(triage: Triage) -> None:
    svc = triage.svc
    first = svc.server(
        triage.form.form_id, triage.submitter.secret, idempotency_key="order-1", json={"a": "1"}
    )
    assert first.status_code == 201, first.text
    erased = first.json()["submission_id"]
    assert triage.delete(erased).status_code == 204

    again = svc.server(
        triage.form.form_id, triage.submitter.secret, idempotency_key="order-1", json={"a": "1"}
    )

    assert again.status_code == 201, again.text
    assert again.json()["submission_id"] != erased
    assert svc.submission(again.json()["submission_id"]).data == {"a": "1"}


def test_a_deletion_deletes_the_files_and_gives_their_bytes_back(svc: Service) -> None:
    up = Uploads(svc)
    answer = up.post(files=[("cv", "cv.pdf", pdf(5000), "application/pdf")])
    assert answer.status_code in (200, 201), answer.text
    (stored,) = svc.submissions(up.form.form_id)
    (file,) = stored.files
    assert svc.run(svc.blobs.stat, file.key) is not None
    workspace_id = up.seeded.workspace.workspace_id
    assert svc.run(svc.store.workspaces.storage_used, workspace_id) == 5000
    key: CreatedKey = svc.run(
        svc.services.keys.create, workspace_id, scopes=frozenset({Scope.MANAGE})
    )

    response = svc.client.delete(
        f"/v1/submissions/{stored.submission_id}",
        headers={"authorization": f"Bearer {key.secret}"},
    )

    assert response.status_code == 204, response.text
    assert svc.run(svc.blobs.stat, file.key) is None
    with pytest.raises(BlobNotFound):
        svc.run(_read_all, svc, file.key)
    assert svc.run(svc.store.workspaces.storage_used, workspace_id) == 0


async def _read_all(svc: Service, key: str) -> bytes:
    return b"".join([chunk async for chunk in svc.blobs.read(key)])


# -- refusals ---------------------------------------------------------------------------


def test_a_body_that_is_not_json_is_malformed(triage: Triage) -> None:
    submission_id = triage.submit()
    before = triage.state(submission_id)
    for content in (b"{", b"", b"[1]", b'"accepted"', b"\xff"):
        response = triage.patch(
            submission_id, content=content, headers={"content-type": "application/json"}
        )
        assert_error(response, "malformed_request")
    assert triage.state(submission_id) == before


def test_another_content_type_is_unsupported(triage: Triage) -> None:
    submission_id = triage.submit()
    before = triage.state(submission_id)
    for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = {"content-type": content_type} if content_type else {}
        response = triage.svc.client.patch(
            f"/v1/submissions/{submission_id}",
            content=b'{"status": "accepted"}',
            headers={**triage.bearer(None), **headers},
        )
        assert_error(response, "unsupported_content_type")
    assert triage.state(submission_id) == before


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({}, {"status"}),
        ({"status": None}, {"status"}),
        ({"status": 1}, {"status"}),
        ({"status": ["accepted"]}, {"status"}),
        ({"status": "unverified"}, {"status"}),
        ({"status": "Accepted"}, {"status"}),
        ({"status": ""}, {"status"}),
        ({"status": "accepted", "data": {}}, {"data"}),
        ({"status": "held", "data": {}}, {"data", "status"}),
    ],
)
def test_a_bad_field_is_refused_naming_it(triage: Triage, body: Any, named: set[str]) -> None:
    submission_id = triage.submit()
    before = triage.state(submission_id)

    response = triage.patch(submission_id, body)

    refused = assert_error(response, "validation_failed")
    assert set(refused["error"]["fields"]) == named
    assert triage.state(submission_id) == before


def test_another_workspaces_submission_is_not_found(triage: Triage) -> None:
    svc = triage.svc
    submission_id = triage.submit()
    before = triage.state(submission_id)
    other = svc.workspace(name="Other").workspace_id
    stranger = triage.key(Scope.MANAGE, workspace_id=other)

    for response in (
        triage.patch(submission_id, {"status": "accepted"}, key=stranger),
        triage.patch(submission_id, {"status": "spam"}, key=stranger),
        triage.delete(submission_id, key=stranger),
        triage.patch("sub_missing0000000000", {"status": "accepted"}),
        triage.delete("sub_missing0000000000"),
    ):
        assert_refused(response, "not_found")
    assert triage.state(submission_id) == before


def test_a_read_key_is_forbidden(triage: Triage) -> None:
    submission_id = triage.submit()
    before = triage.state(submission_id)
    reader = triage.key(Scope.READ)

    assert_refused(triage.patch(submission_id, {"status": "accepted"}, key=reader), "forbidden")
    assert_refused(triage.delete(submission_id, key=reader), "forbidden")
    assert triage.state(submission_id) == before
