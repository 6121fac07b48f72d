"""The things intake keeps: workspaces, forms, API keys, submissions and outbox events."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from itertools import islice
from typing import TypeAlias

from attrs import field, frozen

from intake.domain.form_messages import FormMessages
from intake.domain.signing import DownloadSigner
from intake.domain.uploads import StoredFile, UploadPolicy

# A submitted value: text from a form, or any JSON value within the depth limit.
FieldValue: TypeAlias = "str | int | float | bool | list[FieldValue] | dict[str, FieldValue] | None"
FieldData: TypeAlias = "dict[str, FieldValue]"


def texts_of(value: FieldValue) -> Iterator[str]:
    """Every text a value holds, depth first, in order (lists' items, objects' values):
    what scoring, the spam filter, Akismet and erasure read of submitted data."""
    if isinstance(value, str):
        yield value
        return
    if isinstance(value, list):
        items: Iterable[FieldValue] = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        return
    for item in items:
        # A text read here, not by a generator of its own: most values are texts.
        if isinstance(item, str):
            yield item
        else:
            yield from texts_of(item)


class FormMode(enum.StrEnum):
    PUBLIC = "public"
    PROTECTED = "protected"


class ChallengeProvider(enum.StrEnum):
    TURNSTILE = "turnstile"
    HCAPTCHA = "hcaptcha"
    RECAPTCHA = "recaptcha"


class SubmissionStatus(enum.StrEnum):
    ACCEPTED = "accepted"
    SPAM = "spam"
    UNVERIFIED = "unverified"

    @property
    def uses_quota(self) -> bool:
        return self is SubmissionStatus.ACCEPTED


class EventType(enum.StrEnum):
    CREATED = "submission.created"
    FLAGGED = "submission.flagged"
    DELETED = "submission.deleted"  # ids and time only: receivers erase their copies
    # Queued by an owner to one webhook endpoint only: ids and a time, no submission.
    WEBHOOK_TEST = "webhook.test"
    # Queued by an owner to one mail recipient only: a short mail saying it is a test.
    MAIL_TEST = "mail.test"
    # Queued to a recipient an owner added: the one mail asking them to confirm.
    MAIL_CONFIRM = "mail.confirm"
    # Queued by an owner to one chat destination only: a short message saying it is a test.
    CHAT_TEST = "chat.test"
    # An owner's triage, told to Akismet (domain/spam/opinion.py): ids and the label only,
    # never sent to an owner's destination.
    AKISMET_REPORT = "akismet.report"


class Plan(enum.StrEnum):
    FREE = "free"
    STARTER = "starter"
    BUSINESS = "business"


class RuleKind(enum.StrEnum):
    REQUIRED = "required"
    EMAIL = "email"
    URL = "url"
    NUMBER = "number"
    MAX_LENGTH = "max_length"


@frozen
class FieldRule:
    """One validation rule on one data field. `limit` is used by max_length only."""

    field: str
    kind: RuleKind
    limit: int | None = None


@frozen
class Challenge:
    provider: ChallengeProvider
    secret: str = field(repr=False)


DEFAULT_SPAM_THRESHOLD = 5.0


@frozen
class Workspace:
    workspace_id: str
    name: str
    plan: Plan = Plan.FREE
    monthly_limit: int | None = None  # the workspace's own limit, over the plan's
    active: bool = True
    created_at: datetime | None = None
    # Bytes of files it may keep, over INTAKE_WORKSPACE_STORAGE_LIMIT.
    storage_limit: int | None = None


@frozen
class Form:
    form_id: str
    workspace_id: str
    public_form_key: str
    name: str = ""
    mode: FormMode = FormMode.PUBLIC
    enabled: bool = True
    allowed_origins: tuple[str, ...] = ()
    rules: tuple[FieldRule, ...] = ()
    spam_threshold: float = DEFAULT_SPAM_THRESHOLD
    challenge: Challenge | None = None
    redirect_url: str | None = None
    created_at: datetime | None = None
    uploads: UploadPolicy | None = None  # None: file parts are refused
    messages: FormMessages = field(factory=FormMessages)  # templates, autoresponse, forward only
    # Days its submissions are kept before the retention sweep erases them; None: kept
    # until an owner erases them (docs/privacy.md).
    retention_days: int | None = None

    @property
    def origin_list_on(self) -> bool:
        return bool(self.allowed_origins)


class Scope(enum.StrEnum):
    """What an API key may do (management-api.md): `submit` to the server-side submission
    endpoint, `read` the workspace's objects, `manage` them (which implies `read`)."""

    SUBMIT = "submit"
    READ = "read"
    MANAGE = "manage"


SUBMIT_ONLY = frozenset({Scope.SUBMIT})


def scopes_in_order(scopes: frozenset[Scope]) -> list[Scope]:
    """The scopes as they are printed and stored: submit, read, manage."""
    return [scope for scope in Scope if scope in scopes]


@frozen
class ApiKey:
    key_id: str
    workspace_id: str
    key_hash: bytes = field(repr=False)
    prefix: str  # the first characters, so an operator can tell keys apart
    created_at: datetime
    revoked_at: datetime | None = None
    # Keys made before scopes existed submit, as they always did.
    scopes: frozenset[Scope] = SUBMIT_ONLY

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    def allows(self, scope: Scope) -> bool:
        if scope is Scope.READ:
            return bool(self.scopes & {Scope.READ, Scope.MANAGE})
        return scope in self.scopes


# What an owner is told of a submission's score (`Submission.spam_reasons`): short
# findings ("links:3", "filter:+2.3", "viagra=0.99"), a few words of its text at most.
# Bounded, as a stored row and a page must be, whatever a classifier hands over.
MAX_SPAM_REASONS = 12
MAX_SPAM_REASON_CHARS = 80


def bounded_reasons(reasons: Iterable[str]) -> tuple[str, ...]:
    """The first MAX_SPAM_REASONS reasons, each cut to MAX_SPAM_REASON_CHARS characters."""
    return tuple(
        str(reason)[:MAX_SPAM_REASON_CHARS] for reason in islice(reasons, MAX_SPAM_REASONS)
    )


@frozen
class Submission:
    submission_id: str
    form_id: str
    workspace_id: str
    status: SubmissionStatus
    data: FieldData
    created_at: datetime
    subject: str | None = None
    reply_to: str | None = None
    spam_score: float = 0.0
    client_ip: str | None = None
    files: tuple[StoredFile, ...] = ()
    # Why it scored as it did, for the owner (the dashboard, the management API): never
    # shown to the sender, never in an event's payload.
    spam_reasons: tuple[str, ...] = field(default=(), converter=bounded_reasons)


@frozen
class OutboxEvent:
    event_id: str
    event_type: EventType
    submission_id: str
    form_id: str
    workspace_id: str
    payload: Mapping[str, object]
    created_at: datetime

    @classmethod
    def for_submission(
        cls, event_id: str, submission: Submission, signer: DownloadSigner | None = None
    ) -> OutboxEvent:
        """`signer` makes each file's download link, valid from the submission's time."""
        event_type = (
            EventType.CREATED
            if submission.status is SubmissionStatus.ACCEPTED
            else EventType.FLAGGED
        )
        payload: dict[str, object] = {
            "type": event_type.value,
            "submission_id": submission.submission_id,
            "form_id": submission.form_id,
            "workspace_id": submission.workspace_id,
            "status": submission.status.value,
            "created_at": submission.created_at.isoformat(),
            "subject": submission.subject,
            "reply_to": submission.reply_to,
            "data": submission.data,
            "files": describe_files(submission, signer),
        }
        return cls(
            event_id=event_id,
            event_type=event_type,
            submission_id=submission.submission_id,
            form_id=submission.form_id,
            workspace_id=submission.workspace_id,
            payload=payload,
            created_at=submission.created_at,
        )


def describe_files(
    submission: Submission, signer: DownloadSigner | None, now: datetime | None = None
) -> list[dict[str, object]]:
    """A submission's files as events, webhooks and exports tell of them, each with a link
    valid from `now` (the submission's time unless given) when there is a signer."""
    described = []
    for index, stored in enumerate(submission.files):
        if signer is None:
            described.append(stored.describe(None))
            continue
        link = signer.link(submission.submission_id, index, now or submission.created_at)
        described.append(stored.describe(link.url, link.expires_at.isoformat()))
    return described
