"""The outbox event written with every committed submission, and a submission's spam
reasons, bounded."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from attrs import evolve

from intake.domain.model import (
    MAX_SPAM_REASON_CHARS,
    MAX_SPAM_REASONS,
    EventType,
    Form,
    OutboxEvent,
    Submission,
    SubmissionStatus,
)

CREATED = datetime(2025, 5, 4, 3, 2, 1, tzinfo=UTC)


def submission(status: SubmissionStatus) -> Submission:
    return Submission(
        submission_id="sub_1",
        form_id="frm_1",
        workspace_id="ws_1",
        status=status,
        data={"name": "Ada", "tags": ["a", "b"]},
        created_at=CREATED,
        subject="Hello",
        reply_to="ada@example.com",
        spam_score=1.5,
        client_ip="198.51.100.7",
        spam_reasons=("links:1", "token:viagra"),
    )


def test_an_accepted_submission_is_announced_as_created() -> None:
    event = OutboxEvent.for_submission("evt_1", submission(SubmissionStatus.ACCEPTED))

    assert event.event_type is EventType.CREATED
    assert event.payload["type"] == "submission.created"


@pytest.mark.parametrize("status", [SubmissionStatus.SPAM, SubmissionStatus.UNVERIFIED])
def test_spam_and_unverified_submissions_are_announced_as_flagged(
    status: SubmissionStatus,
) -> None:
    event = OutboxEvent.for_submission("evt_1", submission(status))

    assert event.event_type is EventType.FLAGGED
    assert event.payload["type"] == "submission.flagged"
    assert event.payload["status"] == status.value


def test_the_event_carries_the_decided_payload_and_nothing_that_must_not_show() -> None:
    event = OutboxEvent.for_submission("evt_1", submission(SubmissionStatus.ACCEPTED))

    assert event.event_id == "evt_1"
    assert (event.submission_id, event.form_id, event.workspace_id) == ("sub_1", "frm_1", "ws_1")
    assert event.created_at == CREATED
    assert event.payload == {
        "type": "submission.created",
        "submission_id": "sub_1",
        "form_id": "frm_1",
        "workspace_id": "ws_1",
        "status": "accepted",
        "created_at": "2025-05-04T03:02:01+00:00",
        "subject": "Hello",
        "reply_to": "ada@example.com",
        "data": {"name": "Ada", "tags": ["a", "b"]},
        "files": [],
    }
    assert "spam_score" not in event.payload
    assert "spam_reasons" not in event.payload
    assert "client_ip" not in event.payload


def test_only_accepted_submissions_use_quota() -> None:
    assert SubmissionStatus.ACCEPTED.uses_quota
    assert not SubmissionStatus.SPAM.uses_quota
    assert not SubmissionStatus.UNVERIFIED.uses_quota


def test_a_form_has_its_origin_list_on_when_it_lists_any_origin() -> None:
    assert not Form("frm_1", "ws_1", "key").origin_list_on
    assert Form("frm_1", "ws_1", "key", allowed_origins=("https://a.example",)).origin_list_on


def test_a_submission_keeps_at_most_twelve_reasons_of_at_most_80_characters() -> None:
    many = tuple(f"token:{n}" for n in range(20))
    long = "token:" + "x" * 200

    kept = evolve(submission(SubmissionStatus.SPAM), spam_reasons=(long, *many))

    assert len(kept.spam_reasons) == MAX_SPAM_REASONS == 12
    assert kept.spam_reasons[0] == long[:MAX_SPAM_REASON_CHARS]
    assert len(kept.spam_reasons[0]) == MAX_SPAM_REASON_CHARS == 80
    assert kept.spam_reasons[1:] == many[:11]


def test_reasons_within_the_bounds_are_kept_as_they_are() -> None:
    reasons = tuple(f"token:{n}" for n in range(12))

    assert evolve(submission(SubmissionStatus.SPAM), spam_reasons=reasons).spam_reasons == reasons
    assert evolve(submission(SubmissionStatus.SPAM), spam_reasons=[]).spam_reasons == ()
