"""The events of an owner's triage: a release's `submission.created`, a deletion's
`submission.deleted` (ids and time only) and who gets it, and what an erased
submission's events keep."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from attrs import evolve

from intake.domain.deliveries import NotificationRecipient, WebhookEndpoint
from intake.domain.model import (
    EventType,
    OutboxEvent,
    Submission,
    SubmissionStatus,
    describe_files,
)
from intake.domain.signing import DownloadSigner
from intake.domain.triage import deletion_event, erased_payload, release_event
from intake.domain.uploads import StoredFile

T0 = datetime(2026, 3, 31, 23, 59, tzinfo=UTC)
LATER = T0 + timedelta(days=3)


def spam() -> Submission:
    return Submission(
        submission_id="sub_1",
        form_id="frm_1",
        workspace_id="ws_1",
        status=SubmissionStatus.SPAM,
        data={"message": "hello"},
        created_at=T0,
        subject="Hi",
        reply_to="ada@example.com",
        files=(StoredFile("cv", "cv.pdf", 10, "application/pdf", "a" * 64, "sub_1/0"),),
    )


def accepted_submission() -> Submission:
    return evolve(spam(), status=SubmissionStatus.ACCEPTED)


def test_a_release_event_is_the_created_event_of_an_accepted_submission_queued_now() -> None:
    signer = DownloadSigner(b"k" * 32, "https://forms.example.com")

    event = release_event("evt_2", spam(), signer, LATER)

    accepted = OutboxEvent.for_submission("evt_2", accepted_submission())
    assert event.event_type is EventType.CREATED
    assert event.created_at == LATER
    assert {k: v for k, v in event.payload.items() if k != "files"} == {
        k: v for k, v in accepted.payload.items() if k != "files"
    }
    # The link is valid from the release, not from the submission's time.
    assert event.payload["files"] == describe_files(accepted_submission(), signer, LATER)


def test_a_deletion_event_carries_ids_and_its_time_only() -> None:
    event = deletion_event("evt_3", spam(), LATER)

    assert event.event_type is EventType.DELETED
    assert event.payload == {
        "type": "submission.deleted",
        "submission_id": "sub_1",
        "form_id": "frm_1",
        "workspace_id": "ws_1",
        "deleted_at": LATER.isoformat(),
    }


def test_a_deletion_goes_to_every_enabled_endpoint_and_never_by_mail() -> None:
    plain = WebhookEndpoint("wh_1", "frm_1", "https://h.example.com", "whsec_x")
    flagged = WebhookEndpoint("wh_2", "frm_1", "https://h.example.com", "whsec_x", True)
    disabled = WebhookEndpoint("wh_3", "frm_1", "https://h.example.com", "whsec_x", True, None, T0)

    assert plain.wants(EventType.DELETED)
    assert flagged.wants(EventType.DELETED)
    assert not disabled.wants(EventType.DELETED)
    assert not plain.wants(EventType.FLAGGED)
    assert not NotificationRecipient("rcpt_1", "frm_1", "a@example.com").wants(EventType.DELETED)


def test_an_erased_payload_keeps_its_shape_and_no_submitted_value() -> None:
    payload = dict(OutboxEvent.for_submission("evt_1", spam()).payload)

    erased = erased_payload(payload)

    assert list(erased) == list(payload)
    assert erased == {
        **payload,
        "subject": None,
        "reply_to": None,
        "data": {},
        "files": [],
    }
    assert erased_payload(deletion_event("evt_3", spam(), LATER).payload) == dict(
        deletion_event("evt_3", spam(), LATER).payload
    )
