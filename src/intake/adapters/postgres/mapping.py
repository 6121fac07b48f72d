"""Rows to domain objects and back (intake.adapters.sql_rows), as PostgreSQL holds them.

- Times are timestamptz: stored as the moment, read back as aware UTC datetimes with
  their microseconds. A naive time is refused rather than read in the session's zone.
- Booleans are boolean; psycopg reads json and jsonb back as Python values.
- Submission data and event payloads are `json`, not `jsonb`: json keeps the text as
  written, so the order of the fields, -0.0 and every number's spelling come back
  exactly (jsonb reorders keys and has no negative zero). They are written, not queried.
- The small values of a form (origins, rules, upload policy) and a submission's files
  are jsonb: read as values, never as text.
- PostgreSQL text cannot hold NUL (U+0000), nor can jsonb. The domain refuses NUL in
  what it accepts, so one reaching here is a bug: ValueError, never a storage error. A
  json value may hold it, escaped as \\u0000, and keeps it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from intake.adapters.sql_rows import Codec, Params, RowMapper, as_is, aware, json_text
from intake.domain.idempotency import RETENTION
from intake.domain.listing import SEARCH_SEPARATOR
from intake.domain.model import texts_of
from intake.domain.uploads import files_to_json
from intake.ports.submissions import CommitPlan, HoneypotHit

# Scalars


def checked(params: Params) -> Params:
    """Refuses text that PostgreSQL cannot store. JSON text holds NUL only escaped."""
    for name, value in params.items():
        if isinstance(value, str) and "\x00" in value:
            raise ValueError(f"{name}: PostgreSQL text cannot hold NUL (U+0000)")
    return params


# A time is handed to psycopg as the aware datetime it is.
moment = aware


def utc(value: datetime) -> datetime:
    # psycopg answers in the session's time zone; the domain speaks UTC.
    return value.astimezone(UTC)


def jsonb_text(value: object) -> str:
    if _holds_nul(value):
        raise ValueError("jsonb cannot hold NUL (U+0000)")
    return json_text(value)


def _holds_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_holds_nul(v) for v in value)
    return False


ROW_MAPPER = RowMapper(
    Codec(
        time=moment,
        read_time=utc,
        boolean=as_is,
        read_boolean=as_is,
        json=json_text,
        list_json=jsonb_text,
        read_json=as_is,
        checked=checked,
    )
)


# Submissions, their events, idempotency records and the quota: the commit's arguments


def honeypot_params(hit: HoneypotHit) -> Params:
    """The arguments of intake_record_honeypot() (migrations/0007_honeypot_hits.sql), by name."""
    record, check = hit.idempotency, hit.check
    created_at = None if record is None else moment(record.created_at)
    return checked(
        {
            "form_id": hit.form_id,
            "day": hit.day,
            "idem_scope": None if record is None else record.scope,
            "idem_key": None if record is None else record.key,
            "idem_fingerprint": None if record is None else record.fingerprint,
            "idem_submission_id": None if record is None else record.submission_id,
            "idem_created_at": created_at,
            "idem_expired_at": None if created_at is None else created_at - RETENTION,
            "check_form_id": None if check is None else check.form_id,
            "check_public_key": None if check is None else check.public_form_key,
        }
    )


def commit_params(plan: CommitPlan) -> Params:
    """The arguments of intake_commit() (migrations/README.md names its file), by name,
    each as JSON holds it: one dict, which a group commit sends as it is
    (commit_batch.as_json) and a lone commit binds, cast as the function declares each.
    A time is ISO 8601 text with its microseconds and offset, the spam score the
    shortest text that reads back as the same double (JSON has no infinity): what the
    casts read back exactly."""
    sub, event, record, quota = plan.submission, plan.event, plan.idempotency, plan.quota
    check = plan.check
    created_at = aware(sub.created_at).isoformat()
    # The event is made at its submission's moment: one text for both.
    event_created_at = (
        created_at if event.created_at is sub.created_at else aware(event.created_at).isoformat()
    )
    record_created_at = None if record is None else aware(record.created_at)
    return checked(
        {
            "submission_id": sub.submission_id,
            "form_id": sub.form_id,
            "workspace_id": sub.workspace_id,
            "status": sub.status.value,
            "data": json_text(sub.data),
            "subject": sub.subject,
            "reply_to": sub.reply_to,
            "spam_score": repr(sub.spam_score),
            "client_ip": sub.client_ip,
            "created_at": created_at,
            "files": jsonb_text(files_to_json(sub.files)) if sub.files else "[]",
            # JSON text: a short list, read only with its row.
            "spam_reasons": json_text(sub.spam_reasons),
            "event_id": event.event_id,
            "event_type": event.event_type.value,
            "event_submission_id": event.submission_id,
            "event_form_id": event.form_id,
            "event_workspace_id": event.workspace_id,
            "payload": json_text(dict(event.payload)),
            "event_created_at": event_created_at,
            "idem_scope": None if record is None else record.scope,
            "idem_key": None if record is None else record.key,
            "idem_fingerprint": None if record is None else record.fingerprint,
            "idem_submission_id": None if record is None else record.submission_id,
            "idem_created_at": None if record_created_at is None else record_created_at.isoformat(),
            # A record this old or older has expired (IdempotencyRecord.expired): the
            # domain's retention, handed to SQL as the cut-off moment.
            "idem_expired_at": (
                None if record_created_at is None else (record_created_at - RETENTION).isoformat()
            ),
            "quota_workspace_id": None if quota is None else quota.workspace_id,
            "quota_period": None if quota is None else quota.period,
            "quota_ceiling": None if quota is None else quota.ceiling,
            "check_form_id": None if check is None else check.form_id,
            "check_public_key": None if check is None else check.public_form_key,
            # Count beside other commits while far from the ceiling (intake_commit's step 3).
            "quota_exact": False,
            # The files against the workspace's storage ceiling (intake_commit's step 4).
            "storage_bytes": plan.file_bytes,
            "storage_ceiling": plan.storage_limit,
            "search_text": search_values(plan),
        }
    )


def search_values(plan: CommitPlan) -> str:
    """The data's text values, one per line, which the commit lowers into the row's
    search text (migrations/0026_*.sql). A NUL, which the data's JSON keeps escaped and
    text cannot hold, is left out, as intake_search_text leaves it out."""
    return SEARCH_SEPARATOR.join(texts_of(plan.submission.data)).replace("\x00", "")
