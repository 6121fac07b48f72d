"""The processing order of a submission (spec part 4.3), top to bottom, in one place."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime

from attrs import field, frozen

from intake.domain import ids, validation
from intake.domain.client_network import client_network
from intake.domain.controls import Controls, split_controls
from intake.domain.errors import ErrorCode, IntakeError, Rejection, StorageUnavailable
from intake.domain.idempotency import (
    RETENTION,
    IdempotencyRecord,
    Route,
    fingerprint,
    is_valid_key,
    scope,
)
from intake.domain.limits import PayloadLimits
from intake.domain.model import (
    ApiKey,
    Form,
    FormMode,
    OutboxEvent,
    Plan,
    Submission,
    SubmissionStatus,
)
from intake.domain.origins import origin_allowed
from intake.domain.payload import ContentKind, ParsedBody, check_fields
from intake.domain.quota import (
    DEFAULT_PLANS,
    DEFAULT_STORAGE_LIMIT,
    PlanTerms,
    ceiling,
    period,
    storage_ceiling,
)
from intake.domain.ratelimit import RateLimits, public_windows, server_windows
from intake.domain.scoring import score
from intake.domain.signing import DownloadSigner
from intake.domain.steps import Step
from intake.ports.blobs import BlobStore
from intake.ports.challenge import ChallengeVerdict, ChallengeVerifier
from intake.ports.clock import Clock
from intake.ports.forms import FormContext
from intake.ports.ids import IdSource
from intake.ports.rate_limiter import RateLimiter
from intake.ports.store import Store
from intake.ports.submissions import (
    CommitPlan,
    CommitResult,
    Committed,
    FormCheck,
    FormRefused,
    HoneypotHit,
    HoneypotResult,
    IdempotencyTaken,
    QuotaCharge,
    QuotaReached,
    StorageFull,
)
from intake.service.body import check_declared, read_body
from intake.service.messages import (
    Accepted,
    FieldsBody,
    Outcome,
    PublicTarget,
    Refused,
    SubmitRequest,
)
from intake.service.uploads import UploadSink

log = logging.getLogger("intake.pipeline")

# A transient storage failure: the client may retry at once, but not in a tight loop.
STORAGE_RETRY_AFTER = 1


@frozen
class PipelineSettings:
    limits: PayloadLimits = field(factory=PayloadLimits)
    rate_limits: RateLimits = field(factory=RateLimits)
    plans: Mapping[Plan, PlanTerms] = DEFAULT_PLANS
    # How long a multipart body to a form that takes files may take to arrive.
    upload_timeout: float = 300.0
    # The most bytes of files a workspace keeps, whatever their submissions' status.
    storage_limit: int = DEFAULT_STORAGE_LIMIT


class _Step:
    """Which step the request is in, so that a refusal names it, and the files it has
    written so far, which stay only when its submission is stored."""

    __slots__ = ("current", "keep_files", "sink")

    def __init__(self) -> None:
        self.current = Step.RESOLVE_FORM
        self.sink: UploadSink | None = None
        self.keep_files = False


def _honeypot_hit(plan: CommitPlan, now: datetime) -> HoneypotHit:
    """What a filled honeypot writes in place of `plan`: its form's count of the day and
    its key alone, under the same form check."""
    return HoneypotHit(
        form_id=plan.submission.form_id,
        day=now.astimezone(UTC).date().isoformat(),
        idempotency=plan.idempotency,
        check=plan.check,
    )


class SubmissionPipeline:
    def __init__(
        self,
        *,
        store: Store,
        rate_limiter: RateLimiter,
        challenge: ChallengeVerifier,
        clock: Clock,
        id_source: IdSource,
        settings: PipelineSettings | None = None,
        blobs: BlobStore | None = None,
        signer: DownloadSigner | None = None,
    ) -> None:
        self._blobs = blobs
        self._signer = signer
        self._store = store
        self._rate_limiter = rate_limiter
        self._challenge = challenge
        self._clock = clock
        self._ids = id_source
        self._settings = settings or PipelineSettings()

    async def submit(self, request: SubmitRequest) -> Outcome:
        at = _Step()
        try:
            return await self._submit(request, at)
        finally:
            # A request not stored leaves no file behind. One whose commit failed may
            # yet have been stored (the answer was lost): the sweep decides for those.
            if at.sink is not None and not at.keep_files:
                await at.sink.discard()

    async def _submit(self, request: SubmitRequest, at: _Step) -> Outcome:
        context: FormContext | None = None
        try:
            context, key = await self._resolve(request)
            return await self._process(request, context, key, at)
        except IntakeError as error:
            return Refused(error.rejection, at.current, context.form if context else None)
        except StorageUnavailable:
            log.warning("storage unavailable at step %s", at.current.name)
            rejection = Rejection(ErrorCode.SERVICE_UNAVAILABLE, retry_after=STORAGE_RETRY_AFTER)
            return Refused(rejection, at.current, context.form if context else None)

    # Step 1: resolve the form (and, on the server route, the key that may reach it).
    async def _resolve(self, request: SubmitRequest) -> tuple[FormContext, ApiKey | None]:
        target = request.target
        if isinstance(target, PublicTarget):
            context = await self._store.forms.resolve_public_key(target.public_form_key)
            if context is None:
                raise IntakeError.of(ErrorCode.FORM_NOT_FOUND)
            if context.form.mode is FormMode.PROTECTED:
                raise IntakeError.of(ErrorCode.UNAUTHORIZED)
            return context, None
        key = await self._authenticate(target.authorization)
        context = await self._store.forms.resolve_id(target.form_id)
        if context is None or context.form.workspace_id != key.workspace_id:
            raise IntakeError.of(ErrorCode.FORM_NOT_FOUND)
        return context, key

    async def _authenticate(self, authorization: str | None) -> ApiKey:
        scheme, _, secret = (authorization or "").strip().partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not ids.is_well_formed_api_key(secret):
            raise IntakeError.of(ErrorCode.UNAUTHORIZED)
        digest = ids.hash_secret(secret)
        key = await self._store.api_keys.find_by_hash(digest)
        if key is None or not ids.same_hash(key.key_hash, digest) or key.revoked:
            raise IntakeError.of(ErrorCode.UNAUTHORIZED)
        return key

    async def _process(
        self, request: SubmitRequest, context: FormContext, key: ApiKey | None, at: _Step
    ) -> Outcome:
        form, workspace = context.form, context.workspace
        public = key is None
        route = Route.PUBLIC if public else Route.SERVER
        now = self._clock.now()

        at.current = Step.CHECK_ENABLED
        if not form.enabled or not workspace.active:
            raise IntakeError.of(ErrorCode.FORM_DISABLED)

        at.current = Step.RATE_LIMIT
        limits = self._settings.rate_limits
        # Who the client is, for its rate limits and its idempotency keys alike.
        network = client_network(request.client_ip, limits.ipv6_prefix)
        windows = (
            public_windows(limits, form.form_id, network)
            if key is None
            else server_windows(limits, form.form_id, key.key_id)
        )
        decision = await self._rate_limiter.hit(windows, now.timestamp())
        if not decision.allowed:
            raise IntakeError.of(ErrorCode.RATE_LIMITED, retry_after=decision.retry_after)

        at.current = Step.ORIGIN_POLICY
        if (
            public
            and form.origin_list_on
            and not origin_allowed(request.origin, form.allowed_origins)
        ):
            raise IntakeError.of(ErrorCode.ORIGIN_NOT_ALLOWED)

        at.current = Step.CONTENT_TYPE_AND_SIZE
        parsed = await self._read(request, form, now, at)
        files = at.sink.files if at.sink is not None else ()

        at.current = Step.PARSE
        idempotency_key = request.idempotency_key
        if idempotency_key is not None and not is_valid_key(idempotency_key):
            raise IntakeError.of(ErrorCode.MALFORMED_REQUEST)
        data, controls = split_controls(parsed.data)
        # Only a request with a key is ever compared: the others skip hashing their body.
        refused_files = at.sink.refused if at.sink is not None else {}
        print_ = (
            fingerprint(parsed.data, files, refused_files) if idempotency_key is not None else ""
        )
        key_scope = scope(route, form.form_id, network)
        if idempotency_key is not None:
            earlier = await self._store.submissions.find_idempotency(
                key_scope, idempotency_key, now - RETENTION
            )
            if earlier is not None:
                return self._replay(earlier, print_, context, controls)

        at.current = Step.HONEYPOT
        # A filled honeypot is answered as a success and keeps no submission. It goes on
        # through the same steps and a commit of the same cost (HoneypotHit), only their
        # refusals ignored and nothing stored: a bot must not tell it by the answer's
        # time any more than by its content. The challenge alone is not asked: that
        # would spend the provider's calls on a bot already caught.
        decoy = controls.honeypot_filled

        at.current = Step.CHALLENGE
        status = SubmissionStatus.ACCEPTED
        token = controls.challenge_token or request.challenge_token
        if public and form.challenge is not None and not decoy:
            if not token:
                raise IntakeError.of(ErrorCode.CHALLENGE_FAILED)
            verdict = await self._challenge.verify(form.challenge, token, request.client_ip)
            if verdict is ChallengeVerdict.REJECTED:
                raise IntakeError.of(ErrorCode.CHALLENGE_FAILED)
            if verdict is ChallengeVerdict.UNAVAILABLE:
                status = SubmissionStatus.UNVERIFIED

        at.current = Step.VALIDATE
        errors = validation.validate(
            data,
            form.rules,
            reply_to=controls.reply_to,
            file_fields=parsed.file_fields,
            file_errors=at.sink.refused if at.sink is not None else None,
            files_present=[stored.field for stored in files],
        )
        if errors and not decoy:
            raise IntakeError.of(ErrorCode.VALIDATION_FAILED, fields=errors)

        at.current = Step.SCORE
        spam = score(data, controls.subject)
        if status is SubmissionStatus.ACCEPTED and spam.is_spam(form.spam_threshold):
            status = SubmissionStatus.SPAM

        at.current = Step.QUOTA
        submission = Submission(
            submission_id=at.sink.submission_id
            if at.sink is not None
            else self._new_submission_id(now),
            form_id=form.form_id,
            workspace_id=form.workspace_id,
            status=status,
            data=data,
            created_at=now,
            subject=controls.subject,
            reply_to=validation.reply_address(data, controls.reply_to),
            spam_score=spam.points,
            client_ip=request.client_ip,
            files=files,
        )
        plan = CommitPlan(
            submission=submission,
            event=OutboxEvent.for_submission(self._new_event_id(now), submission, self._signer),
            idempotency=(
                IdempotencyRecord(key_scope, idempotency_key, print_, submission.submission_id, now)
                if idempotency_key is not None
                else None
            ),
            quota=(
                QuotaCharge(
                    workspace.workspace_id,
                    period(now),
                    ceiling(workspace, self._settings.plans),
                )
                if status.uses_quota
                else None
            ),
            check=FormCheck(
                form.form_id,
                request.target.public_form_key
                if isinstance(request.target, PublicTarget)
                else None,
            ),
            storage_limit=storage_ceiling(workspace, self._settings.storage_limit),
        )
        # Steps 11 and 12 are one transaction, so that N concurrent submissions against
        # R remaining commit exactly min(N, R); the quota refusal comes from the commit.
        # A storage failure is the commit's, so the commit is the step until it answers.
        at.current = Step.COMMIT
        result: CommitResult | HoneypotResult
        if decoy:
            result = await self._store.submissions.record_honeypot(_honeypot_hit(plan, now))
        else:
            at.keep_files = True  # from here on, a failure may hide a stored submission
            result = await self._store.submissions.commit(plan)
            at.keep_files = isinstance(result, Committed)
        if isinstance(result, FormRefused):
            # Steps 1 and 2 may have read a cache: the commit found the form changed.
            at.current = (
                Step.CHECK_ENABLED if result.code is ErrorCode.FORM_DISABLED else Step.RESOLVE_FORM
            )
            raise IntakeError.of(result.code)
        if isinstance(result, QuotaReached | StorageFull):
            # Full storage is answered as the quota is, whatever the spam score: a
            # sender must not tell a flagged submission by its answer.
            at.current = Step.QUOTA
            raise IntakeError.of(ErrorCode.QUOTA_EXCEEDED)
        if isinstance(result, IdempotencyTaken):
            return self._replay(result.existing, print_, context, controls)
        assert isinstance(result, Committed)
        return Accepted(submission.submission_id, form, next_url=controls.next_url)

    async def _read(
        self, request: SubmitRequest, form: Form, now: datetime, at: _Step
    ) -> ParsedBody:
        body = request.body
        limits = self._settings.limits
        if isinstance(body, FieldsBody):
            at.current = Step.PARSE
            return check_fields(dict(body.fields), limits)
        uploads = form.uploads
        content_type = check_declared(body, limits, uploads)
        at.current = Step.PARSE
        if uploads is None or content_type.kind is not ContentKind.MULTIPART:
            return await read_body(body, content_type, limits)
        if body.deadline is not None:
            body.deadline.allow(self._settings.upload_timeout)
        at.sink = UploadSink(self._blobs, uploads, self._new_submission_id(now))
        return await read_body(body, content_type, limits, uploads=uploads, sink=at.sink)

    def _replay(
        self,
        earlier: IdempotencyRecord,
        print_: str,
        context: FormContext,
        controls: Controls,
    ) -> Accepted:
        if earlier.fingerprint != print_:
            raise IntakeError.of(ErrorCode.IDEMPOTENCY_CONFLICT)
        return Accepted(
            earlier.submission_id, context.form, replayed=True, next_url=controls.next_url
        )

    def _new_submission_id(self, now: datetime) -> str:
        return ids.submission_id(
            int(now.timestamp() * 1000), self._ids.random_bytes(ids.SUBMISSION_RANDOM_BYTES)
        )

    def _new_event_id(self, now: datetime) -> str:
        return ids.time_sorted_id(
            "evt", int(now.timestamp() * 1000), self._ids.random_bytes(ids.ID_RANDOM_BYTES)
        )
