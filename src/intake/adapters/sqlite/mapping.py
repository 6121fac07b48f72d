"""Rows to domain objects and back. Times are ISO 8601 text in UTC with microseconds,
fixed width, so that they sort and compare as text in SQL and come back exactly."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any, cast

from intake.domain.delivery import (
    Delivery,
    DeliveryState,
    DestinationKind,
    NotificationRecipient,
    WebhookEndpoint,
)
from intake.domain.idempotency import IdempotencyRecord
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
from intake.ports.submissions import OutboxRow

Params = dict[str, object]


# Scalars


def time_text(moment: datetime) -> str:
    if moment.tzinfo is None or moment.utcoffset() is None:
        # A naive time would be read as the host's local time: refuse it, do not guess.
        raise ValueError(f"a stored time must be timezone-aware: {moment!r}")
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def optional_time_text(moment: datetime | None) -> str | None:
    return None if moment is None else time_text(moment)


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.removesuffix("Z")).replace(tzinfo=UTC)


def parse_optional_time(text: str | None) -> datetime | None:
    return None if text is None else parse_time(text)


def json_text(value: object) -> str:
    # Unicode as is (readable in the sqlite3 shell); compact, as it is read by programs.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse_json(text: str) -> Any:
    return json.loads(text)


# Workspaces


def workspace_params(workspace: Workspace) -> Params:
    return {
        "workspace_id": workspace.workspace_id,
        "name": workspace.name,
        "plan": workspace.plan.value,
        "monthly_limit": workspace.monthly_limit,
        "active": int(workspace.active),
        "created_at": optional_time_text(workspace.created_at),
    }


def workspace_from_row(row: sqlite3.Row, prefix: str = "") -> Workspace:
    """`prefix` reads the workspace's columns out of a join, where they are aliased."""
    return Workspace(
        workspace_id=row[f"{prefix}workspace_id"],
        name=row[f"{prefix}name"],
        plan=Plan(row[f"{prefix}plan"]),
        monthly_limit=row[f"{prefix}monthly_limit"],
        active=bool(row[f"{prefix}active"]),
        created_at=parse_optional_time(row[f"{prefix}created_at"]),
    )


# Forms


def form_params(form: Form) -> Params:
    challenge = form.challenge
    return {
        "form_id": form.form_id,
        "workspace_id": form.workspace_id,
        "public_form_key": form.public_form_key,
        "name": form.name,
        "mode": form.mode.value,
        "enabled": int(form.enabled),
        "allowed_origins": json_text(list(form.allowed_origins)),
        "rules": json_text([_rule_json(rule) for rule in form.rules]),
        "spam_threshold": form.spam_threshold,
        "challenge_provider": challenge.provider.value if challenge else None,
        "challenge_secret": challenge.secret if challenge else None,
        "redirect_url": form.redirect_url,
        "created_at": optional_time_text(form.created_at),
    }


def form_from_row(row: sqlite3.Row) -> Form:
    provider = row["challenge_provider"]
    return Form(
        form_id=row["form_id"],
        workspace_id=row["workspace_id"],
        public_form_key=row["public_form_key"],
        name=row["name"],
        mode=FormMode(row["mode"]),
        enabled=bool(row["enabled"]),
        allowed_origins=tuple(parse_json(row["allowed_origins"])),
        rules=tuple(_rule_from_json(item) for item in parse_json(row["rules"])),
        spam_threshold=row["spam_threshold"],
        challenge=(
            Challenge(ChallengeProvider(provider), row["challenge_secret"])
            if provider is not None
            else None
        ),
        redirect_url=row["redirect_url"],
        created_at=parse_optional_time(row["created_at"]),
    )


def _rule_json(rule: FieldRule) -> dict[str, object]:
    return {"field": rule.field, "kind": rule.kind.value, "limit": rule.limit}


def _rule_from_json(item: dict[str, Any]) -> FieldRule:
    return FieldRule(field=item["field"], kind=RuleKind(item["kind"]), limit=item.get("limit"))


# API keys


def api_key_params(key: ApiKey) -> Params:
    return {
        "key_id": key.key_id,
        "workspace_id": key.workspace_id,
        "key_hash": key.key_hash,
        "prefix": key.prefix,
        "created_at": time_text(key.created_at),
        "revoked_at": optional_time_text(key.revoked_at),
    }


def api_key_from_row(row: sqlite3.Row) -> ApiKey:
    return ApiKey(
        key_id=row["key_id"],
        workspace_id=row["workspace_id"],
        key_hash=bytes(row["key_hash"]),
        prefix=row["prefix"],
        created_at=parse_time(row["created_at"]),
        revoked_at=parse_optional_time(row["revoked_at"]),
    )


# Submissions


def submission_params(submission: Submission) -> Params:
    return {
        "submission_id": submission.submission_id,
        "form_id": submission.form_id,
        "workspace_id": submission.workspace_id,
        "status": submission.status.value,
        "data": json_text(submission.data),
        "subject": submission.subject,
        "reply_to": submission.reply_to,
        "spam_score": submission.spam_score,
        "client_ip": submission.client_ip,
        "created_at": time_text(submission.created_at),
    }


def submission_from_row(row: sqlite3.Row) -> Submission:
    return Submission(
        submission_id=row["submission_id"],
        form_id=row["form_id"],
        workspace_id=row["workspace_id"],
        status=SubmissionStatus(row["status"]),
        data=cast(FieldData, parse_json(row["data"])),
        created_at=parse_time(row["created_at"]),
        subject=row["subject"],
        reply_to=row["reply_to"],
        spam_score=row["spam_score"],
        client_ip=row["client_ip"],
    )


# Outbox


def event_params(event: OutboxEvent) -> Params:
    created_at = time_text(event.created_at)
    return {
        "event_id": event.event_id,
        "event_type": event.event_type.value,
        "submission_id": event.submission_id,
        "form_id": event.form_id,
        "workspace_id": event.workspace_id,
        "payload": json_text(dict(event.payload)),
        "created_at": created_at,
        # Due at once: the relay's first attempt needs no wait.
        "next_attempt_at": created_at,
    }


def outbox_row_from_row(row: sqlite3.Row, prefix: str = "") -> OutboxRow:
    """`prefix` reads the row's columns out of a join, where they are aliased."""
    event = OutboxEvent(
        event_id=row[f"{prefix}event_id"],
        event_type=EventType(row[f"{prefix}event_type"]),
        submission_id=row[f"{prefix}submission_id"],
        form_id=row[f"{prefix}form_id"],
        workspace_id=row[f"{prefix}workspace_id"],
        payload=parse_json(row[f"{prefix}payload"]),
        created_at=parse_time(row[f"{prefix}created_at"]),
    )
    return OutboxRow(event, published_at=parse_optional_time(row[f"{prefix}published_at"]))


# Destinations and deliveries


def endpoint_params(endpoint: WebhookEndpoint) -> Params:
    return {
        "endpoint_id": endpoint.endpoint_id,
        "form_id": endpoint.form_id,
        "url": endpoint.url,
        "secret": endpoint.secret,
        "include_flagged": int(endpoint.include_flagged),
        "created_at": optional_time_text(endpoint.created_at),
        "disabled_at": optional_time_text(endpoint.disabled_at),
    }


def endpoint_from_row(row: sqlite3.Row, prefix: str = "") -> WebhookEndpoint:
    return WebhookEndpoint(
        endpoint_id=row[f"{prefix}endpoint_id"],
        form_id=row[f"{prefix}form_id"],
        url=row[f"{prefix}url"],
        secret=row[f"{prefix}secret"],
        include_flagged=bool(row[f"{prefix}include_flagged"]),
        created_at=parse_optional_time(row[f"{prefix}created_at"]),
        disabled_at=parse_optional_time(row[f"{prefix}disabled_at"]),
    )


def recipient_params(recipient: NotificationRecipient) -> Params:
    return {
        "recipient_id": recipient.recipient_id,
        "form_id": recipient.form_id,
        "email": recipient.email,
        "created_at": optional_time_text(recipient.created_at),
    }


def recipient_from_row(row: sqlite3.Row, prefix: str = "") -> NotificationRecipient:
    return NotificationRecipient(
        recipient_id=row[f"{prefix}recipient_id"],
        form_id=row[f"{prefix}form_id"],
        email=row[f"{prefix}email"],
        created_at=parse_optional_time(row[f"{prefix}created_at"]),
    )


def delivery_from_row(row: sqlite3.Row) -> Delivery:
    return Delivery(
        delivery_id=row["delivery_id"],
        event_id=row["event_id"],
        kind=DestinationKind(row["kind"]),
        destination_id=row["destination_id"],
        state=DeliveryState(row["state"]),
        attempts=row["attempts"],
        next_attempt_at=parse_optional_time(row["next_attempt_at"]),
        created_at=parse_time(row["created_at"]),
        last_error=row["last_error"],
        delivered_at=parse_optional_time(row["delivered_at"]),
        dead_at=parse_optional_time(row["dead_at"]),
    )


# Idempotency


def idempotency_params(record: IdempotencyRecord) -> Params:
    return {
        "scope": record.scope,
        "key": record.key,
        "fingerprint": record.fingerprint,
        "submission_id": record.submission_id,
        "created_at": time_text(record.created_at),
    }


def idempotency_from_row(row: sqlite3.Row) -> IdempotencyRecord:
    return IdempotencyRecord(
        scope=row["scope"],
        key=row["key"],
        fingerprint=row["fingerprint"],
        submission_id=row["submission_id"],
        created_at=parse_time(row["created_at"]),
    )
