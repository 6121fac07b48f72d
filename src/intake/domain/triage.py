"""An owner's triage of a submission: what a release queues, what a deletion queues, and
what is left of an event whose submission was erased (management-api.md, "Status
changes and events")."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from datetime import datetime

import attrs

from intake.domain.idempotency import Route, scope
from intake.domain.model import (
    EventType,
    OutboxEvent,
    Submission,
    SubmissionStatus,
    describe_files,
)
from intake.domain.signing import DownloadSigner


class TriageStatus(enum.StrEnum):
    """The statuses an owner may set: `unverified` is only ever the pipeline's."""

    ACCEPTED = "accepted"
    SPAM = "spam"


def release_event(
    event_id: str, submission: Submission, signer: DownloadSigner | None, now: datetime
) -> OutboxEvent:
    """The `submission.created` event of a released submission: the payload a submission
    accepted at once would have had (its own created time, status `accepted`), queued
    at `now`, with file links valid from `now`."""
    accepted = attrs.evolve(submission, status=SubmissionStatus.ACCEPTED)
    event = OutboxEvent.for_submission(event_id, accepted)
    payload = {**event.payload, "files": describe_files(accepted, signer, now)}
    return attrs.evolve(event, payload=payload, created_at=now)


def deletion_event(event_id: str, submission: Submission, now: datetime) -> OutboxEvent:
    """The `submission.deleted` event: ids and the time only, nothing that was submitted."""
    payload: dict[str, object] = {
        "type": EventType.DELETED.value,
        "submission_id": submission.submission_id,
        "form_id": submission.form_id,
        "workspace_id": submission.workspace_id,
        "deleted_at": now.isoformat(),
    }
    return OutboxEvent(
        event_id=event_id,
        event_type=EventType.DELETED,
        submission_id=submission.submission_id,
        form_id=submission.form_id,
        workspace_id=submission.workspace_id,
        payload=payload,
        created_at=now,
    )


# What an event of an erased submission keeps of what was submitted: nothing. Its shape
# stays (decisions.md's payload), every submitted value blank.
ERASED_VALUES: Mapping[str, object] = {"subject": None, "reply_to": None, "data": {}, "files": []}


def erased_payload(payload: Mapping[str, object]) -> dict[str, object]:
    """An event's payload once its submission is erased: the ids, type, status and times
    stay; the subject, reply address, data and files are blanked."""
    return {**payload, **{key: value for key, value in ERASED_VALUES.items() if key in payload}}


def key_scopes(form_id: str) -> tuple[str, tuple[str, str]]:
    """Where a submission of the form may hold an idempotency record, as the stores'
    primary key (scope, key) can seek it: the server route's one scope, and the range,
    from inclusive to exclusive, of the public route's scopes (one per client network).
    An id holds no ':', so nothing of another form falls in the range."""
    public = f"{Route.PUBLIC.value}:{form_id}:"
    return scope(Route.SERVER, form_id), (public, public[:-1] + chr(ord(":") + 1))
