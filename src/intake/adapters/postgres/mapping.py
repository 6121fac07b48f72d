"""Rows to domain objects and back.

- Times are timestamptz: stored as the moment, read back as aware UTC datetimes with
  their microseconds. A naive time is refused rather than read in the session's zone.
- Submission data and event payloads are `json`, not `jsonb`: json keeps the text as
  written, so the order of the fields, -0.0 and every number's spelling come back
  exactly (jsonb reorders keys and has no negative zero). They are written, not queried.
- The small lists of a form (origins, rules) are jsonb.
- PostgreSQL text cannot hold NUL (U+0000), nor can jsonb. The domain refuses NUL in
  what it accepts, so one reaching here is a bug: ValueError, never a storage error. A
  json value may hold it, escaped as \\u0000, and keeps it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, cast

from intake.domain.delivery import (
    Delivery,
    DeliveryState,
    DestinationKind,
    NotificationRecipient,
    WebhookEndpoint,
)
from intake.domain.idempotency import RETENTION, IdempotencyRecord
from intake.domain.model import (
    ApiKey,
    Challenge,
    ChallengeProvider,
    EventType,
    FieldData,
    FieldRule,
    Form,
    FormMode,
    OutboxEvent,
    Plan,
    RuleKind,
    Submission,
    SubmissionStatus,
    Workspace,
)
from intake.ports.submissions import CommitPlan, OutboxRow

Params = dict[str, object]
Row = dict[str, Any]


# Scalars


def checked(params: Params) -> Params:
    """Refuses text that PostgreSQL cannot store. JSON text holds NUL only escaped."""
    for name, value in params.items():
        if isinstance(value, str) and "\x00" in value:
            raise ValueError(f"{name}: PostgreSQL text cannot hold NUL (U+0000)")
    return params


def moment(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        # A naive time would be read in the session's time zone: refuse it, do not guess.
        raise ValueError(f"a stored time must be timezone-aware: {value!r}")
    return value


def optional_moment(value: datetime | None) -> datetime | None:
    return None if value is None else moment(value)


def utc(value: datetime) -> datetime:
    # psycopg answers in the session's time zone; the domain speaks UTC.
    return value.astimezone(UTC)


def optional_utc(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


def json_text(value: object) -> str:
    # Unicode as is; compact, as it is read by programs.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


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


# Workspaces


def workspace_params(workspace: Workspace) -> Params:
    return checked(
        {
            "workspace_id": workspace.workspace_id,
            "name": workspace.name,
            "plan": workspace.plan.value,
            "monthly_limit": workspace.monthly_limit,
            "active": workspace.active,
            "created_at": optional_moment(workspace.created_at),
        }
    )


def workspace_from_row(row: Row, prefix: str = "") -> Workspace:
    """`prefix` reads the workspace's columns out of a join, where they are aliased."""
    return Workspace(
        workspace_id=row[f"{prefix}workspace_id"],
        name=row[f"{prefix}name"],
        plan=Plan(row[f"{prefix}plan"]),
        monthly_limit=row[f"{prefix}monthly_limit"],
        active=row[f"{prefix}active"],
        created_at=optional_utc(row[f"{prefix}created_at"]),
    )


# Forms


def form_params(form: Form) -> Params:
    challenge = form.challenge
    return checked(
        {
            "form_id": form.form_id,
            "workspace_id": form.workspace_id,
            "public_form_key": form.public_form_key,
            "name": form.name,
            "mode": form.mode.value,
            "enabled": form.enabled,
            "allowed_origins": jsonb_text(list(form.allowed_origins)),
            "rules": jsonb_text([_rule_json(rule) for rule in form.rules]),
            "spam_threshold": form.spam_threshold,
            "challenge_provider": challenge.provider.value if challenge else None,
            "challenge_secret": challenge.secret if challenge else None,
            "redirect_url": form.redirect_url,
            "created_at": optional_moment(form.created_at),
        }
    )


def form_from_row(row: Row) -> Form:
    provider = row["challenge_provider"]
    return Form(
        form_id=row["form_id"],
        workspace_id=row["workspace_id"],
        public_form_key=row["public_form_key"],
        name=row["name"],
        mode=FormMode(row["mode"]),
        enabled=row["enabled"],
        allowed_origins=tuple(row["allowed_origins"]),
        rules=tuple(_rule_from_json(item) for item in row["rules"]),
        spam_threshold=row["spam_threshold"],
        challenge=(
            Challenge(ChallengeProvider(provider), row["challenge_secret"])
            if provider is not None
            else None
        ),
        redirect_url=row["redirect_url"],
        created_at=optional_utc(row["created_at"]),
    )


def _rule_json(rule: FieldRule) -> dict[str, object]:
    return {"field": rule.field, "kind": rule.kind.value, "limit": rule.limit}


def _rule_from_json(item: dict[str, Any]) -> FieldRule:
    return FieldRule(field=item["field"], kind=RuleKind(item["kind"]), limit=item.get("limit"))


# API keys


def api_key_params(key: ApiKey) -> Params:
    return checked(
        {
            "key_id": key.key_id,
            "workspace_id": key.workspace_id,
            "key_hash": key.key_hash,
            "prefix": key.prefix,
            "created_at": moment(key.created_at),
            "revoked_at": optional_moment(key.revoked_at),
        }
    )


def api_key_from_row(row: Row) -> ApiKey:
    return ApiKey(
        key_id=row["key_id"],
        workspace_id=row["workspace_id"],
        key_hash=bytes(row["key_hash"]),
        prefix=row["prefix"],
        created_at=utc(row["created_at"]),
        revoked_at=optional_utc(row["revoked_at"]),
    )


# Submissions, their events, idempotency records and the quota: the commit's arguments


def commit_params(plan: CommitPlan) -> Params:
    """The arguments of intake_commit() (migrations.py), by name."""
    sub, event, record, quota = plan.submission, plan.event, plan.idempotency, plan.quota
    event_created_at = moment(event.created_at)
    record_created_at = None if record is None else moment(record.created_at)
    return checked(
        {
            "submission_id": sub.submission_id,
            "form_id": sub.form_id,
            "workspace_id": sub.workspace_id,
            "status": sub.status.value,
            "data": json_text(sub.data),
            "subject": sub.subject,
            "reply_to": sub.reply_to,
            "spam_score": sub.spam_score,
            "client_ip": sub.client_ip,
            "created_at": moment(sub.created_at),
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
            "idem_created_at": record_created_at,
            # A record this old or older has expired (IdempotencyRecord.expired): the
            # domain's retention, handed to SQL as the cut-off moment.
            "idem_expired_at": None if record_created_at is None else record_created_at - RETENTION,
            "quota_workspace_id": None if quota is None else quota.workspace_id,
            "quota_period": None if quota is None else quota.period,
            "quota_ceiling": None if quota is None else quota.ceiling,
        }
    )


def submission_from_row(row: Row) -> Submission:
    return Submission(
        submission_id=row["submission_id"],
        form_id=row["form_id"],
        workspace_id=row["workspace_id"],
        status=SubmissionStatus(row["status"]),
        data=cast(FieldData, row["data"]),
        created_at=utc(row["created_at"]),
        subject=row["subject"],
        reply_to=row["reply_to"],
        spam_score=row["spam_score"],
        client_ip=row["client_ip"],
    )


def outbox_row_from_row(row: Row, prefix: str = "") -> OutboxRow:
    """`prefix` reads the row's columns out of a join, where they are aliased."""
    event = OutboxEvent(
        event_id=row[f"{prefix}event_id"],
        event_type=EventType(row[f"{prefix}event_type"]),
        submission_id=row[f"{prefix}submission_id"],
        form_id=row[f"{prefix}form_id"],
        workspace_id=row[f"{prefix}workspace_id"],
        payload=row[f"{prefix}payload"],
        created_at=utc(row[f"{prefix}created_at"]),
    )
    return OutboxRow(event, published_at=optional_utc(row[f"{prefix}published_at"]))


def idempotency_from_row(row: Row) -> IdempotencyRecord:
    return IdempotencyRecord(
        scope=row["scope"],
        key=row["key"],
        fingerprint=row["fingerprint"],
        submission_id=row["submission_id"],
        created_at=utc(row["created_at"]),
    )


# Destinations and deliveries


def endpoint_params(endpoint: WebhookEndpoint) -> Params:
    return checked(
        {
            "endpoint_id": endpoint.endpoint_id,
            "form_id": endpoint.form_id,
            "url": endpoint.url,
            "secret": endpoint.secret,
            "include_flagged": endpoint.include_flagged,
            "created_at": optional_moment(endpoint.created_at),
            "disabled_at": optional_moment(endpoint.disabled_at),
        }
    )


def endpoint_from_row(row: Row, prefix: str = "") -> WebhookEndpoint:
    return WebhookEndpoint(
        endpoint_id=row[f"{prefix}endpoint_id"],
        form_id=row[f"{prefix}form_id"],
        url=row[f"{prefix}url"],
        secret=row[f"{prefix}secret"],
        include_flagged=row[f"{prefix}include_flagged"],
        created_at=optional_utc(row[f"{prefix}created_at"]),
        disabled_at=optional_utc(row[f"{prefix}disabled_at"]),
    )


def recipient_params(recipient: NotificationRecipient) -> Params:
    return checked(
        {
            "recipient_id": recipient.recipient_id,
            "form_id": recipient.form_id,
            "email": recipient.email,
            "created_at": optional_moment(recipient.created_at),
        }
    )


def recipient_from_row(row: Row, prefix: str = "") -> NotificationRecipient:
    return NotificationRecipient(
        recipient_id=row[f"{prefix}recipient_id"],
        form_id=row[f"{prefix}form_id"],
        email=row[f"{prefix}email"],
        created_at=optional_utc(row[f"{prefix}created_at"]),
    )


def delivery_from_row(row: Row) -> Delivery:
    return Delivery(
        delivery_id=row["delivery_id"],
        event_id=row["event_id"],
        kind=DestinationKind(row["kind"]),
        destination_id=row["destination_id"],
        state=DeliveryState(row["state"]),
        attempts=row["attempts"],
        next_attempt_at=optional_utc(row["next_attempt_at"]),
        created_at=utc(row["created_at"]),
        last_error=row["last_error"],
        delivered_at=optional_utc(row["delivered_at"]),
        dead_at=optional_utc(row["dead_at"]),
    )
