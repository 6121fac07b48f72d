"""Rows to domain objects and back, once for both SQL stores.

The tables of SQLite and PostgreSQL have the same columns; the stores differ only in how a
column holds a scalar: a time, a boolean, JSON. A `Codec` says how one store does it and
a `RowMapper` does the rest. Each store's `mapping` module holds its codec and its mapper.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any, Protocol, TypeVar, cast

from attrs import frozen

from intake.domain.chat import ChatApp, ChatDestination
from intake.domain.deliveries import (
    Delivery,
    DeliveryState,
    DestinationKind,
    NotificationRecipient,
    RecipientStatus,
    WebhookEndpoint,
)
from intake.domain.form_messages import FormMessages
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
    Scope,
    Submission,
    SubmissionStatus,
    Workspace,
    scopes_in_order,
)
from intake.domain.uploads import UploadPolicy, files_from_json, files_to_json
from intake.ports.submissions import MAX_EXISTING_IDS, OutboxRow

Params = dict[str, object]

_T = TypeVar("_T")


class Row(Protocol):
    """A fetched row, read by column name: a sqlite3.Row or a psycopg dict row."""

    def __getitem__(self, key: str, /) -> Any: ...


# Scalars both stores share


def aware(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        # A naive time would be read in a zone the database picks (SQLite's host's,
        # PostgreSQL's session's): refuse it, do not guess.
        raise ValueError(f"a stored time must be timezone-aware: {moment!r}")
    return moment


# Unicode as is (readable in a SQL shell); compact, as it is read by programs. One
# encoder kept: json.dumps with options makes one per call, twice a submission.
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def json_text(value: object) -> str:
    # A submission's files and spam reasons are most often none: the encoder's set-up
    # costs more than the answer.
    if value in ([], ()):
        return "[]"
    return _JSON.encode(value)


def as_is(value: _T) -> _T:
    return value


@frozen
class Codec:
    """How one store holds the scalars of a row."""

    # An aware time as its column holds it; ValueError for a naive one.
    time: Callable[[datetime], object]
    read_time: Callable[[Any], datetime]
    boolean: Callable[[bool], object]
    read_boolean: Callable[[Any], bool]
    # JSON kept as written: submission data and event payloads.
    json: Callable[[object], str]
    # JSON that is read back as values, never as text: a form's origins, rules and upload
    # policy, a submission's files.
    list_json: Callable[[object], str]
    read_json: Callable[[Any], Any]
    # The last look at an object's parameters, before they go to the database.
    checked: Callable[[Params], Params]


@frozen
class RowMapper:
    codec: Codec

    def optional_time(self, value: datetime | None) -> object:
        return None if value is None else self.codec.time(value)

    def read_optional_time(self, value: Any) -> datetime | None:
        return None if value is None else self.codec.read_time(value)

    # Workspaces

    def workspace_params(self, workspace: Workspace) -> Params:
        return self.codec.checked(
            {
                "workspace_id": workspace.workspace_id,
                "name": workspace.name,
                "plan": workspace.plan.value,
                "monthly_limit": workspace.monthly_limit,
                "active": self.codec.boolean(workspace.active),
                "created_at": self.optional_time(workspace.created_at),
                "storage_limit": workspace.storage_limit,
            }
        )

    def workspace_from_row(self, row: Row, prefix: str = "") -> Workspace:
        """`prefix` reads the workspace's columns out of a join, where they are aliased."""
        return Workspace(
            workspace_id=row[f"{prefix}workspace_id"],
            name=row[f"{prefix}name"],
            plan=Plan(row[f"{prefix}plan"]),
            monthly_limit=row[f"{prefix}monthly_limit"],
            active=self.codec.read_boolean(row[f"{prefix}active"]),
            created_at=self.read_optional_time(row[f"{prefix}created_at"]),
            storage_limit=row[f"{prefix}storage_limit"],
        )

    # Forms

    def form_params(self, form: Form) -> Params:
        challenge = form.challenge
        policy = form.uploads
        uploads = None if policy is None else self.codec.list_json(policy.to_json())  # NULL: off
        return self.codec.checked(
            {
                "form_id": form.form_id,
                "workspace_id": form.workspace_id,
                "public_form_key": form.public_form_key,
                "name": form.name,
                "mode": form.mode.value,
                "enabled": self.codec.boolean(form.enabled),
                "allowed_origins": self.codec.list_json(list(form.allowed_origins)),
                "rules": self.codec.list_json([_rule_json(rule) for rule in form.rules]),
                "spam_threshold": form.spam_threshold,
                "challenge_provider": challenge.provider.value if challenge else None,
                "challenge_secret": challenge.secret if challenge else None,
                "redirect_url": form.redirect_url,
                "created_at": self.optional_time(form.created_at),
                "uploads": uploads,
                "retention_days": form.retention_days,
                # NULL: every default, as for a form made before these settings.
                "messages": None
                if form.messages == FormMessages()
                else self.codec.list_json(form.messages.to_json()),
            }
        )

    def form_from_row(self, row: Row) -> Form:
        provider = row["challenge_provider"]
        uploads = row["uploads"]
        return Form(
            form_id=row["form_id"],
            workspace_id=row["workspace_id"],
            public_form_key=row["public_form_key"],
            name=row["name"],
            mode=FormMode(row["mode"]),
            enabled=self.codec.read_boolean(row["enabled"]),
            allowed_origins=tuple(self.codec.read_json(row["allowed_origins"])),
            rules=tuple(_rule_from_json(item) for item in self.codec.read_json(row["rules"])),
            spam_threshold=row["spam_threshold"],
            challenge=(
                Challenge(ChallengeProvider(provider), row["challenge_secret"])
                if provider is not None
                else None
            ),
            redirect_url=row["redirect_url"],
            created_at=self.read_optional_time(row["created_at"]),
            uploads=(
                None if uploads is None else UploadPolicy.from_json(self.codec.read_json(uploads))
            ),
            retention_days=row["retention_days"],
            messages=FormMessages.from_json(
                None if row["messages"] is None else self.codec.read_json(row["messages"])
            ),
        )

    # API keys

    def api_key_params(self, key: ApiKey) -> Params:
        return self.codec.checked(
            {
                "key_id": key.key_id,
                "workspace_id": key.workspace_id,
                "key_hash": key.key_hash,
                "prefix": key.prefix,
                "created_at": self.codec.time(key.created_at),
                "revoked_at": self.optional_time(key.revoked_at),
                "scopes": " ".join(scopes_in_order(key.scopes)),
            }
        )

    def api_key_from_row(self, row: Row) -> ApiKey:
        return ApiKey(
            key_id=row["key_id"],
            workspace_id=row["workspace_id"],
            key_hash=bytes(row["key_hash"]),
            prefix=row["prefix"],
            created_at=self.codec.read_time(row["created_at"]),
            revoked_at=self.read_optional_time(row["revoked_at"]),
            scopes=frozenset(Scope(name) for name in row["scopes"].split()),
        )

    # Submissions

    def submission_params(self, submission: Submission) -> Params:
        return self.codec.checked(
            {
                "submission_id": submission.submission_id,
                "form_id": submission.form_id,
                "workspace_id": submission.workspace_id,
                "status": submission.status.value,
                "data": self.codec.json(submission.data),
                "subject": submission.subject,
                "reply_to": submission.reply_to,
                "spam_score": submission.spam_score,
                "client_ip": submission.client_ip,
                "created_at": self.codec.time(submission.created_at),
                "files": self.codec.list_json(files_to_json(submission.files)),
                # JSON text on both stores: a short list, read only with its row.
                "spam_reasons": json_text(submission.spam_reasons),
            }
        )

    def submission_from_row(self, row: Row) -> Submission:
        return Submission(
            submission_id=row["submission_id"],
            form_id=row["form_id"],
            workspace_id=row["workspace_id"],
            status=SubmissionStatus(row["status"]),
            data=cast(FieldData, self.codec.read_json(row["data"])),
            created_at=self.codec.read_time(row["created_at"]),
            subject=row["subject"],
            reply_to=row["reply_to"],
            spam_score=row["spam_score"],
            client_ip=row["client_ip"],
            files=files_from_json(self.codec.read_json(row["files"])),
            spam_reasons=json.loads(row["spam_reasons"]),
        )

    # Outbox

    def event_params(self, event: OutboxEvent) -> Params:
        created_at = self.codec.time(event.created_at)
        return self.codec.checked(
            {
                "event_id": event.event_id,
                "event_type": event.event_type.value,
                "submission_id": event.submission_id,
                "form_id": event.form_id,
                "workspace_id": event.workspace_id,
                "payload": self.codec.json(dict(event.payload)),
                "created_at": created_at,
                # Due at once: the relay's first attempt needs no wait.
                "next_attempt_at": created_at,
            }
        )

    def outbox_row_from_row(self, row: Row, prefix: str = "") -> OutboxRow:
        """`prefix` reads the row's columns out of a join, where they are aliased."""
        event = OutboxEvent(
            event_id=row[f"{prefix}event_id"],
            event_type=EventType(row[f"{prefix}event_type"]),
            submission_id=row[f"{prefix}submission_id"],
            form_id=row[f"{prefix}form_id"],
            workspace_id=row[f"{prefix}workspace_id"],
            payload=self.codec.read_json(row[f"{prefix}payload"]),
            created_at=self.codec.read_time(row[f"{prefix}created_at"]),
        )
        return OutboxRow(event, published_at=self.read_optional_time(row[f"{prefix}published_at"]))

    # Idempotency

    def idempotency_params(self, record: IdempotencyRecord) -> Params:
        return self.codec.checked(
            {
                "scope": record.scope,
                "key": record.key,
                "fingerprint": record.fingerprint,
                "submission_id": record.submission_id,
                "created_at": self.codec.time(record.created_at),
            }
        )

    def idempotency_from_row(self, row: Row) -> IdempotencyRecord:
        return IdempotencyRecord(
            scope=row["scope"],
            key=row["key"],
            fingerprint=row["fingerprint"],
            submission_id=row["submission_id"],
            created_at=self.codec.read_time(row["created_at"]),
        )

    # Destinations and deliveries

    def endpoint_params(self, endpoint: WebhookEndpoint) -> Params:
        return self.codec.checked(
            {
                "endpoint_id": endpoint.endpoint_id,
                "form_id": endpoint.form_id,
                "url": endpoint.url,
                "secret": endpoint.secret,
                "include_flagged": self.codec.boolean(endpoint.include_flagged),
                "created_at": self.optional_time(endpoint.created_at),
                "disabled_at": self.optional_time(endpoint.disabled_at),
            }
        )

    def endpoint_from_row(self, row: Row, prefix: str = "") -> WebhookEndpoint:
        return WebhookEndpoint(
            endpoint_id=row[f"{prefix}endpoint_id"],
            form_id=row[f"{prefix}form_id"],
            url=row[f"{prefix}url"],
            secret=row[f"{prefix}secret"],
            include_flagged=self.codec.read_boolean(row[f"{prefix}include_flagged"]),
            created_at=self.read_optional_time(row[f"{prefix}created_at"]),
            disabled_at=self.read_optional_time(row[f"{prefix}disabled_at"]),
        )

    # A chat destination's secret (its webhook URL or bot token) is written here and
    # read in chat_from_row, nowhere else: the one place to seal and unseal it.
    def chat_params(self, destination: ChatDestination) -> Params:
        return self.codec.checked(
            {
                "destination_id": destination.destination_id,
                "form_id": destination.form_id,
                "app": destination.app.value,
                "secret": destination.secret,
                "chat_id": destination.chat_id,
                "include_flagged": self.codec.boolean(destination.include_flagged),
                "created_at": self.optional_time(destination.created_at),
            }
        )

    def chat_from_row(self, row: Row, prefix: str = "") -> ChatDestination:
        return ChatDestination(
            destination_id=row[f"{prefix}destination_id"],
            form_id=row[f"{prefix}form_id"],
            app=ChatApp(row[f"{prefix}app"]),
            secret=row[f"{prefix}secret"],
            chat_id=row[f"{prefix}chat_id"],
            include_flagged=self.codec.read_boolean(row[f"{prefix}include_flagged"]),
            created_at=self.read_optional_time(row[f"{prefix}created_at"]),
        )

    def recipient_params(self, recipient: NotificationRecipient) -> Params:
        return self.codec.checked(
            {
                "recipient_id": recipient.recipient_id,
                "form_id": recipient.form_id,
                "email": recipient.email,
                "created_at": self.optional_time(recipient.created_at),
                "status": recipient.status.value,
                "confirm_hash": recipient.confirm_hash,
            }
        )

    def recipient_from_row(self, row: Row, prefix: str = "") -> NotificationRecipient:
        return NotificationRecipient(
            recipient_id=row[f"{prefix}recipient_id"],
            form_id=row[f"{prefix}form_id"],
            email=row[f"{prefix}email"],
            created_at=self.read_optional_time(row[f"{prefix}created_at"]),
            status=RecipientStatus(row[f"{prefix}status"]),
        )

    def delivery_from_row(self, row: Row) -> Delivery:
        return Delivery(
            delivery_id=row["delivery_id"],
            event_id=row["event_id"],
            kind=DestinationKind(row["kind"]),
            destination_id=row["destination_id"],
            state=DeliveryState(row["state"]),
            attempts=row["attempts"],
            next_attempt_at=self.read_optional_time(row["next_attempt_at"]),
            created_at=self.codec.read_time(row["created_at"]),
            last_error=row["last_error"],
            delivered_at=self.read_optional_time(row["delivered_at"]),
            dead_at=self.read_optional_time(row["dead_at"]),
        )


# Rules every store keeps, the in-memory one too


def existing_query_ids(submission_ids: Collection[str]) -> list[str]:
    """The distinct ids to look for, sorted (a query's parameters the same for the same
    set); ValueError past the limit of one call."""
    if len(submission_ids) > MAX_EXISTING_IDS:
        raise ValueError(f"at most {MAX_EXISTING_IDS} submission ids per call")
    return sorted(set(submission_ids))


_SECRET_NAME = re.compile(r"[a-z0-9-]{1,64}")
MIN_SECRET_SIZE = 32  # bytes: 256 bits, an HMAC-SHA256 key's full strength


def check_secret(name: str, candidate: bytes) -> None:
    """SecretRepository.get_or_create's arguments: ValueError for a name not of 1 to 64
    of `a-z 0-9 -`, or a candidate too short to be a key. The candidate is checked even
    when a secret is stored already: a caller's bug shows on the first call, not only on
    a fresh database."""
    if not _SECRET_NAME.fullmatch(name):
        raise ValueError("a secret's name is 1 to 64 characters of a-z, 0-9 and -")
    if len(candidate) < MIN_SECRET_SIZE:
        raise ValueError(f"a secret is at least {MIN_SECRET_SIZE} bytes")


def _rule_json(rule: FieldRule) -> dict[str, object]:
    return {"field": rule.field, "kind": rule.kind.value, "limit": rule.limit}


def _rule_from_json(item: dict[str, Any]) -> FieldRule:
    return FieldRule(field=item["field"], kind=RuleKind(item["kind"]), limit=item.get("limit"))
