"""Domain objects for the contract tests, with every attribute set to something that
would show if a store dropped or mangled it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from intake.domain import ids
from intake.domain.deliveries import NotificationRecipient, WebhookEndpoint
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import (
    ApiKey,
    Challenge,
    ChallengeProvider,
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
from intake.domain.uploads import StoredFile, UploadPolicy, file_key
from intake.ports.store import Store
from intake.ports.submissions import CommitPlan, QuotaCharge

# Microseconds on purpose: a store that rounds them loses the test.
T0 = datetime(2026, 1, 15, 12, 0, 0, 123456, tzinfo=UTC)
PERIOD = "2026-01"
# When the builders' destinations were added: before any submission, so each gets them all
# (a destination gets only the events queued once it was there).
ADDED = T0 - timedelta(minutes=1)
WORKSPACE_ID = "ws_1"
FORM_ID = "frm_1"


def workspace(workspace_id: str = WORKSPACE_ID, name: str = "Acme") -> Workspace:
    return Workspace(
        workspace_id=workspace_id,
        name=name,
        plan=Plan.STARTER,
        monthly_limit=250,
        active=True,
        created_at=T0,
    )


def form(
    form_id: str = FORM_ID,
    workspace_id: str = WORKSPACE_ID,
    public_form_key: str = "pk0form1",
) -> Form:
    return Form(
        form_id=form_id,
        workspace_id=workspace_id,
        public_form_key=public_form_key,
        name="Contact us",
        mode=FormMode.PROTECTED,
        enabled=False,
        allowed_origins=("https://example.com", "https://www.example.com"),
        rules=(
            FieldRule("email", RuleKind.EMAIL),
            FieldRule("email", RuleKind.REQUIRED),
            FieldRule("message", RuleKind.MAX_LENGTH, 2000),
        ),
        spam_threshold=3.5,
        challenge=Challenge(ChallengeProvider.TURNSTILE, "0x-secret"),
        redirect_url="https://example.com/thanks",
        created_at=T0 + timedelta(seconds=1),
    )


def upload_policy() -> UploadPolicy:
    """Every limit away from its default, types in an order no store may sort."""
    return UploadPolicy(
        allowed_types=("image/*", "application/pdf", "text/csv"),
        max_file_size=3_000_001,
        max_total_size=7_000_003,
        max_files=4,
    )


def stored_file(submission_id: str, index: int, field: str = "attachment") -> StoredFile:
    return StoredFile(
        field=field,
        name=f"Résumé ✓ {index}.pdf",
        size=1_234_567 + index,
        content_type="application/pdf",
        sha256=f"{index:x}" * 64,
        key=file_key(submission_id, index),
    )


def api_key(
    key_id: str = "key_1",
    workspace_id: str = WORKSPACE_ID,
    created_at: datetime = T0,
) -> ApiKey:
    secret = ids.api_key(key_id.encode().ljust(ids.API_KEY_RANDOM_BYTES, b"\0"))
    return ApiKey(
        key_id=key_id,
        workspace_id=workspace_id,
        key_hash=ids.hash_secret(secret),
        prefix=secret[:14],
        created_at=created_at,
    )


def submission(
    n: int,
    *,
    form_id: str = FORM_ID,
    workspace_id: str = WORKSPACE_ID,
    status: SubmissionStatus = SubmissionStatus.ACCEPTED,
    data: FieldData | None = None,
    created_at: datetime | None = None,
    files: int = 0,
) -> Submission:
    """The n-th submission: ids and times grow with n, so n orders them. `files`: how
    many stored files it carries (`stored_file`), the last in a field of its own."""
    at = created_at or T0 + timedelta(milliseconds=n)
    submission_id = ids.submission_id(
        int(T0.timestamp() * 1000) + n, n.to_bytes(ids.SUBMISSION_RANDOM_BYTES, "big")
    )
    return Submission(
        submission_id=submission_id,
        form_id=form_id,
        workspace_id=workspace_id,
        status=status,
        data=data if data is not None else {"email": f"user{n}@example.com", "n": n},
        created_at=at,
        subject=f"Message {n}",
        reply_to=f"user{n}@example.com",
        spam_score=1.25,
        client_ip="203.0.113.7",
        files=tuple(
            stored_file(submission_id, i, "photo" if i == files - 1 else "attachment")
            for i in range(files)
        ),
    )


def event_for(sub: Submission) -> OutboxEvent:
    n = int(sub.created_at.timestamp() * 1000)
    # The submission's own random part keeps events of one millisecond apart.
    random = sub.submission_id.encode()[-ids.ID_RANDOM_BYTES :]
    return OutboxEvent.for_submission(ids.time_sorted_id("evt", n, random), sub)


def record(
    sub: Submission, key: str = "key-1", scope: str = f"public:{FORM_ID}"
) -> IdempotencyRecord:
    return IdempotencyRecord(scope, key, "f" * 64, sub.submission_id, sub.created_at)


def quota(ceiling: int, workspace_id: str = WORKSPACE_ID, period: str = PERIOD) -> QuotaCharge:
    return QuotaCharge(workspace_id, period, ceiling)


def plan(
    sub: Submission,
    *,
    idempotency: IdempotencyRecord | None = None,
    charge: QuotaCharge | None = None,
) -> CommitPlan:
    return CommitPlan(submission=sub, event=event_for(sub), idempotency=idempotency, quota=charge)


async def seed(store: Store, *forms: Form) -> None:
    """The workspace and forms that submissions belong to (real stores check it)."""
    workspaces = {f.workspace_id for f in forms} or {WORKSPACE_ID}
    for workspace_id in sorted(workspaces):
        await store.workspaces.add(workspace(workspace_id))
    for each in forms or (form(),):
        await store.forms.add(each)


async def stored(store: Store, form_id: str = FORM_ID) -> list[Submission]:
    return [s async for s in store.submissions.iterate(form_id)]


def endpoint(
    endpoint_id: str = "whk_1",
    *,
    form_id: str = FORM_ID,
    include_flagged: bool = False,
    created_at: datetime | None = ADDED + timedelta(seconds=2),
    disabled_at: datetime | None = None,
) -> WebhookEndpoint:
    return WebhookEndpoint(
        endpoint_id=endpoint_id,
        form_id=form_id,
        url=f"https://hooks.example.com/intake/{endpoint_id}?token=ü",
        secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        include_flagged=include_flagged,
        created_at=created_at,
        disabled_at=disabled_at,
    )


def recipient(
    recipient_id: str = "rcp_1",
    *,
    form_id: str = FORM_ID,
    email: str | None = None,
    created_at: datetime | None = ADDED + timedelta(seconds=3),
) -> NotificationRecipient:
    return NotificationRecipient(
        recipient_id=recipient_id,
        form_id=form_id,
        email=email or f"{recipient_id}@example.com",
        created_at=created_at,
    )
