"""Management use cases: workspaces, forms, API keys, submissions, and where submissions
are delivered (webhook endpoints, notification recipients, the outbox)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from datetime import datetime

from attrs import evolve, frozen

from intake.domain import ids
from intake.domain.controls import is_control
from intake.domain.delivery import Delivery, NotificationRecipient, WebhookEndpoint
from intake.domain.model import (
    ApiKey,
    Challenge,
    ChallengeProvider,
    FieldRule,
    Form,
    FormMode,
    Plan,
    RuleKind,
    Submission,
    SubmissionStatus,
    Workspace,
    describe_files,
)
from intake.domain.origins import normalize_origin, normalize_pattern
from intake.domain.quota import DEFAULT_PLANS, PlanTerms, ceiling, period
from intake.domain.signing import DownloadSigner
from intake.domain.uploads import (
    MAX_FILE_SIZE_CEILING,
    MAX_FILES_CEILING,
    StoredFile,
    UploadPolicy,
    normalize_type_pattern,
)
from intake.domain.validation import is_email
from intake.domain.webhook_targets import (
    Resolver,
    TargetNotPublic,
    TargetRefused,
    TargetUnresolved,
    check_target,
)
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.store import Store
from intake.ports.submissions import OutboxRow


class AdminError(Exception):
    """A management request that cannot be carried out; the message says why."""


class NotFoundError(AdminError):
    pass


@frozen
class CreatedKey:
    key: ApiKey
    secret: str  # shown once, never stored


@frozen
class CreatedEndpoint:
    endpoint: WebhookEndpoint
    secret: str  # shown once; kept to sign with, never printed again


@frozen
class Outbox:
    """The outbox as an operator sees it: events and their deliveries, as many as asked
    for, and how many there are in all: `total` deliveries (dead ones only, when only
    those were asked for) and `waiting` events not yet fanned out."""

    events: list[OutboxRow]
    deliveries: list[Delivery]
    total: int
    waiting: int


@frozen
class CsvLine:
    submission: Submission | None  # None for the header
    text: str


@frozen
class WorkspaceUsage:
    workspace: Workspace
    period: str
    used: int
    ceiling: int
    storage_used: int = 0  # bytes of files its submissions keep, whatever their status


_UNSET: object = object()


def parse_rule(text: str) -> FieldRule:
    """`field:kind` or `field:max_length=N`, as the command line spells a rule."""
    name, sep, spec = text.partition(":")
    # The shape first: `email` alone is a missing kind, not an unknown one.
    if not sep or not name.strip():
        raise AdminError(f"a rule is FIELD:KIND, not {text!r}")
    kind_text, _, limit_text = spec.partition("=")
    try:
        kind = RuleKind(kind_text.strip())
    except ValueError:
        kinds = ", ".join(k.value for k in RuleKind)
        raise AdminError(f"unknown rule {kind_text!r} in {text!r} (one of: {kinds})") from None
    limit: int | None = None
    if kind is RuleKind.MAX_LENGTH:
        try:
            limit = int(limit_text)
        except ValueError:
            raise AdminError(
                f"max_length needs a number: FIELD:max_length=N, not {text!r}"
            ) from None
        if limit < 1:
            raise AdminError("max_length must be at least 1")
    elif limit_text:
        raise AdminError(f"only max_length takes a value, not {text!r}")
    return FieldRule(field=name.strip(), kind=kind, limit=limit)


def _origins(values: Iterable[str]) -> tuple[str, ...]:
    normalized = []
    for value in values:
        origin = normalize_pattern(value)
        if origin is None:
            raise AdminError(f"not an origin (scheme://host[:port]): {value!r}")
        if origin not in normalized:
            normalized.append(origin)
    return tuple(normalized)


DEFAULT_FORM_NAME = "Untitled form"
MAX_FORM_NAME = 200  # characters: a name is a label in lists and mail subjects


def _name(value: str) -> str:
    name = value.strip()
    if not name:
        raise AdminError("a form's name cannot be empty")
    if len(name) > MAX_FORM_NAME:
        raise AdminError(f"a form's name is at most {MAX_FORM_NAME} characters, not {len(name)}")
    return name


def _rules(rules: Iterable[FieldRule]) -> tuple[FieldRule, ...]:
    """Rules are for data: a control field is taken out of the data before validation,
    so a rule on it would never apply."""
    checked = tuple(rules)
    for rule in checked:
        if is_control(rule.field):
            raise AdminError(
                f"no rule can be set on {rule.field!r}: names starting with _ (and the "
                "challenge tokens) are control fields, not data"
            )
    return checked


def _redirect(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if normalize_origin(value) is None:
        raise AdminError(f"a redirect URL must be an absolute http(s) URL: {value!r}")
    return value


@frozen
class UploadChanges:
    """Changes to a form's upload policy, as an operator asks for them: `enabled=False`
    turns uploads off; `enabled=True`, or any value given, turns them on. A value not
    given stays as the form has it, or takes its default when uploads were off."""

    enabled: bool | None = None
    allowed_types: tuple[str, ...] | None = None
    max_file_size: int | None = None
    max_total_size: int | None = None
    max_files: int | None = None

    def _given(self) -> list[str]:
        values = {
            "allowed_types": self.allowed_types,
            "max_file_size": self.max_file_size,
            "max_total_size": self.max_total_size,
            "max_files": self.max_files,
        }
        return [name for name, value in values.items() if value is not None]

    def apply(self, current: UploadPolicy | None) -> UploadPolicy | None:
        given = self._given()
        if self.enabled is False:
            if given:
                names = ", ".join(given)
                raise AdminError(f"uploads cannot be turned off and given {names} at once")
            return None
        if self.enabled is None and not given:
            return current
        base = current or UploadPolicy()
        file_size = _size("max_file_size", self.max_file_size, base.max_file_size)
        total_size = _size("max_total_size", self.max_total_size, base.max_total_size)
        files = base.max_files if self.max_files is None else self.max_files
        if not 1 <= files <= MAX_FILES_CEILING:
            raise AdminError(f"max_files must be 1 to {MAX_FILES_CEILING}, not {files}")
        types = base.allowed_types
        if self.allowed_types is not None:
            types = _type_patterns(self.allowed_types)
        try:
            return UploadPolicy(
                allowed_types=types,
                max_file_size=file_size,
                max_total_size=total_size,
                max_files=files,
            )
        except ValueError as error:  # the policy's own checks, should a new one be added
            raise AdminError(str(error)) from None


def _size(name: str, given: int | None, current: int) -> int:
    if given is None:
        return current
    if not 1 <= given <= MAX_FILE_SIZE_CEILING:
        raise AdminError(f"{name} must be 1 to {MAX_FILE_SIZE_CEILING} bytes, not {given}")
    return given


def _type_patterns(values: Iterable[str]) -> tuple[str, ...]:
    patterns: list[str] = []
    for value in values:
        try:
            pattern = normalize_type_pattern(value)
        except ValueError:
            raise AdminError(
                f"not a MIME type or pattern: {value!r} (type/subtype, type/* or */*)"
            ) from None
        if pattern not in patterns:
            patterns.append(pattern)
    if not patterns:
        raise AdminError("a form that takes files accepts at least one type")
    return tuple(patterns)


class Admin:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        id_source: IdSource,
        plans: Mapping[Plan, PlanTerms] = DEFAULT_PLANS,
        *,
        webhook_allow_private: bool = False,
        webhook_resolver: Resolver | None = None,
        blobs: BlobStore | None = None,
        signer: DownloadSigner | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._ids = id_source
        self._plans = plans
        self._allow_private = webhook_allow_private
        # Without one, a webhook's host name is left for the relay to resolve and check.
        self._resolve = webhook_resolver
        self._blobs = blobs
        self._signer = signer

    def _id(self, prefix: str) -> str:
        return ids.prefixed_id(prefix, self._ids.random_bytes(ids.ID_RANDOM_BYTES))

    def _upload_policy(
        self, changes: UploadChanges, current: UploadPolicy | None
    ) -> UploadPolicy | None:
        """The policy `changes` make of `current`. A form takes files only where a blob
        store keeps them: without one, every file sent to it would be refused."""
        policy = changes.apply(current)
        if policy is not None and self._blobs is None:
            raise AdminError(
                "no blob store is configured to keep uploaded files: set INTAKE_BLOB_URL "
                "(see docs/uploads.md), then turn uploads on"
            )
        return policy

    # Workspaces

    async def create_workspace(
        self,
        name: str,
        plan: Plan = Plan.FREE,
        monthly_limit: int | None = None,
        *,
        storage_limit: int | None = None,
    ) -> Workspace:
        if monthly_limit is not None and monthly_limit < 0:
            raise AdminError("a monthly limit cannot be negative")
        _check_storage_limit(storage_limit)
        workspace = Workspace(
            workspace_id=self._id("ws"),
            name=name,
            plan=plan,
            monthly_limit=monthly_limit,
            active=True,
            created_at=self._clock.now(),
            storage_limit=storage_limit,
        )
        await self._store.workspaces.add(workspace)
        return workspace

    async def workspace(self, workspace_id: str) -> Workspace:
        workspace = await self._store.workspaces.get(workspace_id)
        if workspace is None:
            raise NotFoundError(f"no workspace {workspace_id!r}")
        return workspace

    async def workspaces(self) -> list[Workspace]:
        return await self._store.workspaces.list()

    async def set_workspace_active(self, workspace_id: str, active: bool) -> Workspace:
        workspace = evolve(await self.workspace(workspace_id), active=active)
        await self._store.workspaces.update(workspace)
        return workspace

    async def update_workspace(
        self,
        workspace_id: str,
        *,
        plan: Plan | None = None,
        monthly_limit: int | object | None = _UNSET,
        storage_limit: int | object | None = _UNSET,
    ) -> Workspace:
        workspace = await self.workspace(workspace_id)
        if plan is not None:
            workspace = evolve(workspace, plan=plan)
        if monthly_limit is not _UNSET:
            assert monthly_limit is None or isinstance(monthly_limit, int)
            workspace = evolve(workspace, monthly_limit=monthly_limit)
        if storage_limit is not _UNSET:
            assert storage_limit is None or isinstance(storage_limit, int)
            _check_storage_limit(storage_limit)
            workspace = evolve(workspace, storage_limit=storage_limit)
        await self._store.workspaces.update(workspace)
        return workspace

    async def usage(self, workspace_id: str) -> WorkspaceUsage:
        workspace = await self.workspace(workspace_id)
        month = period(self._clock.now())
        used = await self._store.workspaces.usage(workspace_id, month)
        storage = await self._store.workspaces.storage_used(workspace_id)
        return WorkspaceUsage(workspace, month, used, ceiling(workspace, self._plans), storage)

    # Forms

    async def create_form(
        self,
        workspace_id: str,
        *,
        name: str = DEFAULT_FORM_NAME,
        mode: FormMode = FormMode.PUBLIC,
        allowed_origins: Iterable[str] = (),
        rules: Iterable[FieldRule] = (),
        challenge: Challenge | None = None,
        redirect_url: str | None = None,
        spam_threshold: float | None = None,
        uploads: UploadChanges | None = None,
    ) -> Form:
        policy = self._upload_policy(uploads, None) if uploads is not None else None
        await self.workspace(workspace_id)
        form = Form(
            form_id=self._id("frm"),
            workspace_id=workspace_id,
            public_form_key=ids.public_form_key(self._ids.random_bytes(ids.ID_RANDOM_BYTES)),
            name=_name(name),
            mode=mode,
            enabled=True,
            allowed_origins=_origins(allowed_origins),
            rules=_rules(rules),
            challenge=challenge,
            redirect_url=_redirect(redirect_url),
            created_at=self._clock.now(),
            uploads=policy,
        )
        if spam_threshold is not None:
            form = evolve(form, spam_threshold=_threshold(spam_threshold))
        await self._store.forms.add(form)
        return form

    async def form(self, form_id: str) -> Form:
        form = await self._store.forms.get(form_id)
        if form is None:
            raise NotFoundError(f"no form {form_id!r}")
        return form

    async def forms(self, workspace_id: str | None = None) -> list[Form]:
        return await self._store.forms.list(workspace_id)

    async def update_form(
        self,
        form_id: str,
        *,
        name: str | None = None,
        mode: FormMode | None = None,
        allowed_origins: Iterable[str] | None = None,
        rules: Iterable[FieldRule] | None = None,
        challenge: Challenge | object | None = _UNSET,
        redirect_url: str | object | None = _UNSET,
        spam_threshold: float | None = None,
        enabled: bool | None = None,
        uploads: UploadChanges | None = None,
    ) -> Form:
        form = await self.form(form_id)
        if name is not None:
            form = evolve(form, name=_name(name))
        if mode is not None:
            form = evolve(form, mode=mode)
        if allowed_origins is not None:
            form = evolve(form, allowed_origins=_origins(allowed_origins))
        if rules is not None:
            form = evolve(form, rules=_rules(rules))
        if challenge is not _UNSET:
            assert challenge is None or isinstance(challenge, Challenge)
            form = evolve(form, challenge=challenge)
        if redirect_url is not _UNSET:
            assert redirect_url is None or isinstance(redirect_url, str)
            form = evolve(form, redirect_url=_redirect(redirect_url))
        if spam_threshold is not None:
            form = evolve(form, spam_threshold=_threshold(spam_threshold))
        if enabled is not None:
            form = evolve(form, enabled=enabled)
        if uploads is not None:
            form = evolve(form, uploads=self._upload_policy(uploads, form.uploads))
        await self._store.forms.update(form)
        return form

    async def rotate_key(self, form_id: str) -> Form:
        form = evolve(
            await self.form(form_id),
            public_form_key=ids.public_form_key(self._ids.random_bytes(ids.ID_RANDOM_BYTES)),
        )
        await self._store.forms.update(form)
        return form

    # API keys

    async def create_api_key(self, workspace_id: str) -> CreatedKey:
        await self.workspace(workspace_id)
        secret = ids.api_key(self._ids.random_bytes(ids.API_KEY_RANDOM_BYTES))
        key = ApiKey(
            key_id=self._id("key"),
            workspace_id=workspace_id,
            key_hash=ids.hash_secret(secret),
            prefix=secret[: len(ids.API_KEY_PREFIX) + 6],
            created_at=self._clock.now(),
        )
        await self._store.api_keys.add(key)
        return CreatedKey(key, secret)

    async def revoke_api_key(self, key_id: str) -> ApiKey:
        if not await self._store.api_keys.revoke(key_id, self._clock.now()):
            raise NotFoundError(f"no API key {key_id!r}")
        key = await self._store.api_keys.get(key_id)
        assert key is not None
        return key

    async def api_keys(self, workspace_id: str) -> list[ApiKey]:
        await self.workspace(workspace_id)
        return await self._store.api_keys.list(workspace_id)

    # Submissions

    async def submissions(
        self, form_id: str, status: SubmissionStatus | None = None
    ) -> AsyncIterator[Submission]:
        await self.form(form_id)
        async for submission in self._store.submissions.iterate(form_id, status):
            yield submission

    def files_view(self, submission: Submission) -> list[dict[str, object]]:
        """A submission's files as an operator reads them: each with a download link
        valid from now, when links can be signed."""
        return describe_files(submission, self._signer, self._clock.now())

    def view(self, submission: Submission) -> dict[str, object]:
        """`submission_view` with fresh download links."""
        return submission_view(submission, self.files_view(submission))

    @property
    def has_blob_store(self) -> bool:
        return self._blobs is not None

    def read_file(self, stored: StoredFile) -> AsyncGenerator[bytes, None]:
        """A file's content in chunks, streamed from the blob store (see
        `BlobStore.read`: BlobNotFound when the blob is gone)."""
        if self._blobs is None:
            raise AdminError("no blob store is configured (INTAKE_BLOB_URL)")
        return self._blobs.read(stored.key)

    async def export_csv(
        self, form_id: str, status: SubmissionStatus | None = None
    ) -> AsyncIterator[str]:
        """`csv_export` as a stream of lines, without holding the submissions in memory."""
        async for line in self.export_csv_rows(form_id, status):
            yield line.text

    async def export_csv_rows(
        self, form_id: str, status: SubmissionStatus | None = None
    ) -> AsyncIterator[CsvLine]:
        """The CSV lines, each with the submission it holds (None for the header).

        Two passes over the store: the first collects the data fields, so the header is
        known before the first row; the second writes the rows. The store lists oldest
        (lowest id) first, so the second pass stops at the last id the first one saw, and
        a row committed between the passes with fields outside the header is left out:
        every row fits the header, as in `csv_export`. The `files` column is there when
        the form takes files, or a row exported has some."""
        form = await self.form(form_id)
        fields: dict[str, None] = {}
        files = form.uploads is not None
        last: str | None = None
        async for row in self._store.submissions.iterate(form_id, status):
            for name in row.data:
                fields.setdefault(name, None)
            files = files or bool(row.files)
            last = row.submission_id
        yield CsvLine(None, csv_line(csv_header(fields, files=files)))
        if last is None:
            return
        async for row in self._store.submissions.iterate(form_id, status):
            if row.submission_id > last:
                break
            if all(name in fields for name in row.data):
                yield CsvLine(row, csv_line(csv_record(row, fields, files=files)))

    # Webhook endpoints and notification recipients

    async def add_webhook(
        self, form_id: str, url: str, *, include_flagged: bool = False
    ) -> CreatedEndpoint:
        await self.form(form_id)
        secret = ids.webhook_secret(self._ids.random_bytes(ids.SECRET_RANDOM_BYTES))
        endpoint = WebhookEndpoint(
            endpoint_id=self._id("wh"),
            form_id=form_id,
            url=await self._webhook_url(url),
            secret=secret,
            include_flagged=include_flagged,
            created_at=self._clock.now(),
        )
        await self._store.destinations.add_endpoint(endpoint)
        return CreatedEndpoint(endpoint, secret)

    async def _webhook_url(self, value: str) -> str:
        """The URL as given, once it passes the rule the relay applies at every delivery
        (domain/webhook_targets.py), so the owner learns of a refusal at once. A name
        that cannot be resolved just now is taken: the relay resolves it again anyway."""
        text = value.strip()
        try:
            await check_target(text, allow_private=self._allow_private, resolve=self._resolve)
        except TargetNotPublic as refused:
            raise AdminError(
                f"{refused} (INTAKE_WEBHOOK_ALLOW_PRIVATE=true allows private and http URLs)"
            ) from None
        except TargetRefused as refused:
            raise AdminError(f"{refused}: {value!r}") from None
        except TargetUnresolved:
            pass
        return text

    async def webhooks(self, form_id: str) -> list[WebhookEndpoint]:
        await self.form(form_id)
        return await self._store.destinations.list_endpoints(form_id)

    async def remove_webhook(self, endpoint_id: str) -> None:
        if not await self._store.destinations.remove_endpoint(endpoint_id):
            raise NotFoundError(f"no webhook endpoint {endpoint_id!r}")

    async def add_recipient(self, form_id: str, email: str) -> NotificationRecipient:
        await self.form(form_id)
        address = email.strip()
        if not is_email(address):
            raise AdminError(f"not an email address: {email!r}")
        taken = f"{address} is already notified for form {form_id}"
        existing = await self._store.destinations.list_recipients(form_id)
        # Two rows would mean two mails for every submission; addresses differing only
        # in case reach the same mailbox in practice.
        if any(r.email.lower() == address.lower() for r in existing):
            raise AdminError(taken)
        recipient = NotificationRecipient(
            recipient_id=self._id("rcpt"),
            form_id=form_id,
            email=address,
            created_at=self._clock.now(),
        )
        try:
            await self._store.destinations.add_recipient(recipient)
        except ValueError:  # the store's own check, against an `add` at the same moment
            raise AdminError(taken) from None
        return recipient

    async def recipients(self, form_id: str) -> list[NotificationRecipient]:
        await self.form(form_id)
        return await self._store.destinations.list_recipients(form_id)

    async def remove_recipient(self, recipient_id: str) -> None:
        if not await self._store.destinations.remove_recipient(recipient_id):
            raise NotFoundError(f"no notification recipient {recipient_id!r}")

    # The outbox

    async def outbox(self, *, dead_only: bool = False, limit: int = 100) -> Outbox:
        """The deliveries (only the dead ones with `dead_only`) and, without it, the
        outbox rows as well."""
        deliveries = await self._store.deliveries.list_deliveries(dead_only=dead_only, limit=limit)
        events = [] if dead_only else await self._store.submissions.outbox(limit)
        counts = await self._store.deliveries.counts()
        total = counts.dead if dead_only else counts.pending + counts.delivered + counts.dead
        return Outbox(events, deliveries, total=total, waiting=counts.unpublished)

    async def retry(self, event_id: str) -> int:
        """Makes an event's dead deliveries due now; returns how many. An unknown event
        (or one purged) and an event with nothing dead are refused, each saying so."""
        count = await self._store.deliveries.retry_dead(event_id, self._clock.now())
        if count is None:
            raise NotFoundError(f"no event {event_id!r} in the outbox")
        if count == 0:
            raise AdminError(f"event {event_id!r} has no dead deliveries")
        return count


def _threshold(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise AdminError(f"a spam threshold must be a finite number more than zero, not {value}")
    return float(value)


def challenge_of(provider: str | None, secret: str | None) -> Challenge | None:
    if provider is None:
        if secret is not None:
            raise AdminError("--challenge-secret goes with --challenge")
        return None
    try:
        kind = ChallengeProvider(provider)
    except ValueError:
        raise AdminError(f"unknown challenge provider {provider!r}") from None
    if not secret:
        raise AdminError("--challenge needs --challenge-secret")
    return Challenge(kind, secret)


# Views: the JSON shapes the command line and the library print.


def _time(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _check_storage_limit(limit: int | None) -> None:
    if limit is not None and limit < 0:
        raise AdminError("a storage limit cannot be negative")


def workspace_view(workspace: Workspace) -> dict[str, object]:
    return {
        "workspace_id": workspace.workspace_id,
        "name": workspace.name,
        "plan": workspace.plan.value,
        "monthly_limit": workspace.monthly_limit,
        "storage_limit": workspace.storage_limit,
        "active": workspace.active,
        "created_at": _time(workspace.created_at),
    }


def form_view(form: Form) -> dict[str, object]:
    return {
        "form_id": form.form_id,
        "workspace_id": form.workspace_id,
        "public_form_key": form.public_form_key,
        "name": form.name,
        "mode": form.mode.value,
        "enabled": form.enabled,
        "state": "enabled" if form.enabled else "paused",
        "allowed_origins": list(form.allowed_origins),
        "rules": [
            {"field": r.field, "kind": r.kind.value, **({"limit": r.limit} if r.limit else {})}
            for r in form.rules
        ],
        "spam_threshold": form.spam_threshold,
        # The provider only: the secret is never printed back.
        "challenge": form.challenge.provider.value if form.challenge else None,
        "redirect_url": form.redirect_url,
        "uploads": form.uploads.to_json() if form.uploads is not None else None,
        "created_at": _time(form.created_at),
    }


def key_view(key: ApiKey) -> dict[str, object]:
    return {
        "key_id": key.key_id,
        "workspace_id": key.workspace_id,
        "prefix": key.prefix,
        "created_at": _time(key.created_at),
        "revoked_at": _time(key.revoked_at),
        "revoked": key.revoked,
    }


def submission_view(
    submission: Submission, files: list[dict[str, object]] | None = None
) -> dict[str, object]:
    """`files`: the files as `Admin.files_view` describes them; without links if not given."""
    return {
        "submission_id": submission.submission_id,
        "form_id": submission.form_id,
        "status": submission.status.value,
        "subject": submission.subject,
        "reply_to": submission.reply_to,
        "data": submission.data,
        "files": files if files is not None else [f.describe(None) for f in submission.files],
        "created_at": submission.created_at.isoformat(),
    }


def endpoint_view(endpoint: WebhookEndpoint) -> dict[str, object]:
    # Never the secret: it is printed once, by `webhook add`.
    return {
        "endpoint_id": endpoint.endpoint_id,
        "form_id": endpoint.form_id,
        "url": endpoint.url,
        "include_flagged": endpoint.include_flagged,
        "enabled": endpoint.enabled,
        "created_at": _time(endpoint.created_at),
        "disabled_at": _time(endpoint.disabled_at),
    }


def recipient_view(recipient: NotificationRecipient) -> dict[str, object]:
    return {
        "recipient_id": recipient.recipient_id,
        "form_id": recipient.form_id,
        "email": recipient.email,
        "created_at": _time(recipient.created_at),
    }


def delivery_view(delivery: Delivery) -> dict[str, object]:
    return {
        "delivery_id": delivery.delivery_id,
        "event_id": delivery.event_id,
        "kind": delivery.kind.value,
        "destination_id": delivery.destination_id,
        "state": delivery.state.value,
        "attempts": delivery.attempts,
        "next_attempt_at": _time(delivery.next_attempt_at),
        "last_error": delivery.last_error,
        "created_at": _time(delivery.created_at),
        "delivered_at": _time(delivery.delivered_at),
        "dead_at": _time(delivery.dead_at),
    }


def outbox_event_view(row: OutboxRow) -> dict[str, object]:
    # The ids and times only; the payload holds what the visitor typed.
    event = row.event
    return {
        "event_id": event.event_id,
        "event_type": event.event_type.value,
        "submission_id": event.submission_id,
        "form_id": event.form_id,
        "workspace_id": event.workspace_id,
        "created_at": _time(event.created_at),
        "published_at": _time(row.published_at),
    }


_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# Spreadsheets skip leading spaces and line breaks before they look for a formula.
_FORMULA_STARTS = ("=", "+", "-", "@")


def _csv_cell(value: object) -> str:
    """Text for a spreadsheet cell; a leading formula character is defused with `'`
    (OWASP's advice against CSV injection)."""
    if value is None:
        text = ""
    elif isinstance(value, str):
        text = value
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        text = ", ".join(str(v) for v in value)
    else:
        text = json.dumps(value, ensure_ascii=False)
    if text.startswith(_FORMULA_PREFIXES) or text.lstrip().startswith(_FORMULA_STARTS):
        return "'" + text
    return text


CSV_FIXED_COLUMNS = ("submission_id", "created_at", "status", "subject", "reply_to")
CSV_FILES_COLUMN = "files"
CSV_FILE_SEPARATOR = "; "


def csv_header(fields: Iterable[str], *, files: bool = False) -> list[str]:
    """The fixed columns, then the data fields in the order given; a sender chose those
    names, so they are defused like any cell. Then, with `files`, the files column."""
    header = [*CSV_FIXED_COLUMNS, *(_csv_cell(name) for name in fields)]
    return [*header, CSV_FILES_COLUMN] if files else header


def csv_record(row: Submission, fields: Iterable[str], *, files: bool = False) -> list[str]:
    """One submission's cells under `csv_header(fields, files=files)`, each defused for
    spreadsheets; the files cell holds the files' names."""
    record = [
        _csv_cell(row.submission_id),
        _csv_cell(row.created_at.isoformat()),
        _csv_cell(row.status.value),
        _csv_cell(row.subject),
        _csv_cell(row.reply_to),
    ] + [_csv_cell(row.data.get(name)) for name in fields]
    if files:
        record.append(_csv_cell(CSV_FILE_SEPARATOR.join(f.name for f in row.files)))
    return record


def csv_line(cells: Iterable[str]) -> str:
    """One CSV record with its CRLF terminator (RFC 4180)."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(cells)
    return out.getvalue()


def csv_export(rows: list[Submission], *, files: bool = False) -> str:
    """One row per submission: fixed columns, then every data field seen, in first-seen
    order, then the files column when `files` or a row has files."""
    fields: dict[str, None] = {}
    for row in rows:
        for name in row.data:
            fields.setdefault(name, None)
    files = files or any(row.files for row in rows)
    lines = [csv_line(csv_header(fields, files=files))]
    lines.extend(csv_line(csv_record(row, fields, files=files)) for row in rows)
    return "".join(lines)


def jsonl_line(submission: Submission, files: list[dict[str, object]] | None = None) -> str:
    view = submission_view(submission, files)
    return json.dumps(view, ensure_ascii=False, separators=(",", ":"))
