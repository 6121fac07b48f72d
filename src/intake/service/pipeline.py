"""The processing order of a submission (spec part 4.3), top to bottom, in one place.

The step under way is kept in `at`; what it raises is answered as that step's refusal
(`intake.service.step_refusal`): one `try` for all costs nothing until one refuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from attrs import field, frozen

from intake.domain import ids, validation
from intake.domain.client_network import ClientNetwork, client_network
from intake.domain.controls import Controls, split_controls
from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.idempotency import RETENTION, IdempotencyRecord, Route, scope
from intake.domain.limits import DEFAULT_UPLOAD_TIMEOUT, PayloadLimits
from intake.domain.model import (
    ApiKey,
    FieldData,
    Form,
    FormMode,
    OutboxEvent,
    Plan,
    Scope,
    Submission,
    SubmissionStatus,
)
from intake.domain.origins import origin_allowed
from intake.domain.payload import ContentKind, ContentType, ParsedBody, check_fields
from intake.domain.privacy import ClientIpStorage, stored_client_ip
from intake.domain.quota import DEFAULT_PLANS, DEFAULT_STORAGE_LIMIT, PlanTerms
from intake.domain.ratelimit import RateLimits, public_windows, server_windows
from intake.domain.scoring import Score
from intake.domain.signing import DownloadSigner
from intake.domain.steps import Step
from intake.domain.uploads import StoredFile
from intake.ports.blobs import BlobStore
from intake.ports.challenge import ChallengeVerdict, ChallengeVerifier
from intake.ports.clock import Clock
from intake.ports.forms import FormContext
from intake.ports.ids import IdSource
from intake.ports.pipeline_store import PipelineStore
from intake.ports.rate_limiter import RateLimiter
from intake.ports.spam_opinion import SpamOpinion
from intake.ports.submissions import CommitPlan, CommitResult, Committed, HoneypotResult
from intake.service.api_access import live_key
from intake.service.body import check_declared, read_body
from intake.service.commit_plan import answer, commit_plan, honeypot_hit
from intake.service.commit_timing import CommitTiming
from intake.service.idempotency_claim import IdempotencyClaim
from intake.service.messages import (
    FieldsBody,
    Outcome,
    PublicTarget,
    RawBody,
    Refused,
    SubmitRequest,
)
from intake.service.second_opinion import second_opinion
from intake.service.spam_scoring import SpamScoring
from intake.service.step_refusal import STEP_ERRORS, StepRefusal, refusal
from intake.service.uploads import UploadSink


@frozen
class PipelineSettings:
    limits: PayloadLimits = field(factory=PayloadLimits)
    rate_limits: RateLimits = field(factory=RateLimits)
    plans: Mapping[Plan, PlanTerms] = DEFAULT_PLANS
    # How long a multipart body to a form that takes files may take to arrive.
    upload_timeout: float = DEFAULT_UPLOAD_TIMEOUT
    # The most bytes of files a workspace keeps, whatever their submissions' status.
    storage_limit: int = DEFAULT_STORAGE_LIMIT
    # What a stored submission keeps of its client's address; the limits count it whole.
    client_ip: ClientIpStorage = ClientIpStorage.TRUNCATED


class _RequestFiles:
    """The files a request has written, which stay only if its submission is (`keep`)."""

    __slots__ = ("keep", "sink")

    def __init__(self) -> None:
        self.sink: UploadSink | None = None
        self.keep = False

    @property
    def stored(self) -> tuple[StoredFile, ...]:
        return self.sink.files if self.sink is not None else ()

    @property
    def refused(self) -> dict[str, str]:
        return self.sink.refused if self.sink is not None else {}

    async def settle(self) -> None:
        # A request not stored leaves no file behind. One whose commit failed may yet
        # have been stored (the answer was lost): the sweep decides for those.
        if self.sink is not None and not self.keep:
            await self.sink.discard()


def _check_enabled(context: FormContext) -> None:
    if not context.form.enabled or not context.workspace.active:
        raise IntakeError.of(ErrorCode.FORM_DISABLED)


def _check_origin(request: SubmitRequest, form: Form, *, public: bool) -> None:
    if public and form.origin_list_on and not origin_allowed(request.origin, form.allowed_origins):
        raise IntakeError.of(ErrorCode.ORIGIN_NOT_ALLOWED)


def _validate(
    form: Form,
    data: FieldData,
    controls: Controls,
    parsed: ParsedBody,
    files: _RequestFiles,
    *,
    decoy: bool,
) -> None:
    errors = validation.validate(
        data,
        form.rules,
        reply_to=controls.reply_to,
        file_fields=parsed.file_fields,
        file_errors=files.refused,
        files_present=[stored.field for stored in files.stored],
    )
    if errors and not decoy:
        raise IntakeError.of(ErrorCode.VALIDATION_FAILED, fields=errors)


class SubmissionPipeline:
    def __init__(
        self,
        *,
        store: PipelineStore,
        rate_limiter: RateLimiter,
        challenge: ChallengeVerifier,
        clock: Clock,
        id_source: IdSource,
        settings: PipelineSettings | None = None,
        blobs: BlobStore | None = None,
        signer: DownloadSigner | None = None,
        commit_timing: CommitTiming | None = None,
        spam_scoring: SpamScoring | None = None,
        spam_opinion: SpamOpinion | None = None,
    ) -> None:
        self._commit_timing = commit_timing or CommitTiming()
        self._spam_scoring = spam_scoring or SpamScoring()
        self._opinion = spam_opinion
        self._blobs = blobs
        self._signer = signer
        self._store = store
        self._rate_limiter = rate_limiter
        self._challenge = challenge
        self._clock = clock
        self._ids = id_source
        self._settings = settings or PipelineSettings()
        validation.warm_up()

    async def submit(self, request: SubmitRequest) -> Outcome:
        files = _RequestFiles()
        context: FormContext | None = None
        try:
            try:
                context, key = await self._resolve(request)
            except STEP_ERRORS as error:
                raise refusal(Step.RESOLVE_FORM, error) from error
            return await self._process(request, context, key, files)
        except StepRefusal as refused:
            return Refused(refused.rejection, refused.step, context.form if context else None)
        finally:
            await files.settle()

    async def _process(
        self,
        request: SubmitRequest,
        context: FormContext,
        key: ApiKey | None,
        files: _RequestFiles,
    ) -> Outcome:
        form = context.form
        public = key is None
        now = self._clock.now()
        # Who the client is, for its rate limits and its idempotency keys alike.
        network = client_network(request.client_ip, self._settings.rate_limits.ipv6_prefix)
        key_scope = scope(Route.PUBLIC if public else Route.SERVER, form.form_id, network)
        at = Step.CHECK_ENABLED
        try:
            _check_enabled(context)
            at = Step.RATE_LIMIT
            await self._rate_limit(form, key, network, now)
            at = Step.ORIGIN_POLICY
            _check_origin(request, form, public=public)
            at = Step.CONTENT_TYPE_AND_SIZE
            content_type = self._check_declared(request.body, form)
            at = Step.PARSE
            parsed = await self._parse(request.body, content_type, form, files, now)
            claim = IdempotencyClaim.of(
                request.idempotency_key, key_scope, parsed.data, files.stored, files.refused
            )
            data, controls = split_controls(parsed.data)
            earlier = await self._find_earlier(claim, now)
            if earlier is not None:
                return claim.replay(earlier, form, controls)
            at = Step.HONEYPOT
            # A filled honeypot is answered as a success and keeps no submission. It goes on
            # through the same steps and a commit of the same cost (HoneypotHit), refusals
            # ignored and nothing stored: a bot must not tell it by the answer's time. Only
            # the challenge is not asked: no provider's call is spent on a bot caught.
            decoy = controls.honeypot_filled
            at = Step.CHALLENGE
            status = await self._verify_challenge(
                request, form, controls, asked=public and not decoy
            )
            at = Step.VALIDATE
            _validate(form, data, controls, parsed, files, decoy=decoy)
            at = Step.SCORE
            spam = await self._spam_scoring.score(form, data, controls)
            if public and not decoy:  # never a bot already caught: no call spent on it
                spam = await second_opinion(
                    self._opinion, spam, request=request, form=form, data=data, controls=controls
                )
            if status is SubmissionStatus.ACCEPTED and spam.is_spam(form.spam_threshold):
                status = SubmissionStatus.SPAM
            at = Step.QUOTA
            submission = self._submission(
                request, form, files, now, data=data, controls=controls, status=status, spam=spam
            )
            plan = self._plan(submission, context, request, claim, now)
            # Steps 11 and 12 are one transaction (see commit_plan): the quota refusal comes
            # from the commit, and a storage failure is the commit's until it answers.
            at = Step.COMMIT
            result = await self._commit(plan, files, decoy=decoy, now=now)
            return answer(result, plan, claim, form, controls)
        except STEP_ERRORS as error:
            raise refusal(at, error) from error

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
        key = await live_key(self._store.api_keys, target.authorization)
        # A key that may not submit is refused as an unknown one (docs/api.md, "Keys and scopes").
        if not key.allows(Scope.SUBMIT):
            raise IntakeError.of(ErrorCode.UNAUTHORIZED)
        context = await self._store.forms.resolve_id(target.form_id)
        if context is None or context.form.workspace_id != key.workspace_id:
            raise IntakeError.of(ErrorCode.FORM_NOT_FOUND)
        return context, key

    async def _rate_limit(
        self, form: Form, key: ApiKey | None, network: ClientNetwork, now: datetime
    ) -> None:
        limits = self._settings.rate_limits
        windows = (
            public_windows(limits, form.form_id, network)
            if key is None
            else server_windows(limits, form.form_id, key.key_id)
        )
        decision = await self._rate_limiter.hit(windows, now.timestamp())
        if not decision.allowed:
            raise IntakeError.of(ErrorCode.RATE_LIMITED, retry_after=decision.retry_after)

    def _check_declared(self, body: RawBody | FieldsBody, form: Form) -> ContentType | None:
        """Step 5, before any byte is read (in-process fields meet their limits as parsed)."""
        if isinstance(body, FieldsBody):
            return None
        return check_declared(body, self._settings.limits, form.uploads)

    async def _parse(
        self,
        body: RawBody | FieldsBody,
        content_type: ContentType | None,
        form: Form,
        files: _RequestFiles,
        now: datetime,
    ) -> ParsedBody:
        limits = self._settings.limits
        if isinstance(body, FieldsBody):
            return check_fields(dict(body.fields), limits)
        assert content_type is not None, "a body on the wire has its type checked first"
        uploads = form.uploads
        if uploads is None or content_type.kind is not ContentKind.MULTIPART:
            return await read_body(body, content_type, limits)
        if body.deadline is not None:
            body.deadline.allow(self._settings.upload_timeout)
        files.sink = UploadSink(self._blobs, uploads, self._new_submission_id(now))
        return await read_body(body, content_type, limits, uploads=uploads, sink=files.sink)

    async def _find_earlier(
        self, claim: IdempotencyClaim, now: datetime
    ) -> IdempotencyRecord | None:
        if claim.key is None:
            return None
        return await self._store.submissions.find_idempotency(
            claim.scope, claim.key, now - RETENTION
        )

    async def _verify_challenge(
        self, request: SubmitRequest, form: Form, controls: Controls, *, asked: bool
    ) -> SubmissionStatus:
        """ACCEPTED, or UNVERIFIED when the provider could not tell."""
        if not asked or form.challenge is None:
            return SubmissionStatus.ACCEPTED
        token = controls.challenge_token or request.challenge_token
        if not token:
            raise IntakeError.of(ErrorCode.CHALLENGE_FAILED)
        verdict = await self._challenge.verify(form.challenge, token, request.client_ip)
        if verdict is ChallengeVerdict.REJECTED:
            raise IntakeError.of(ErrorCode.CHALLENGE_FAILED)
        if verdict is ChallengeVerdict.UNAVAILABLE:
            return SubmissionStatus.UNVERIFIED
        return SubmissionStatus.ACCEPTED

    def _submission(
        self,
        request: SubmitRequest,
        form: Form,
        files: _RequestFiles,
        now: datetime,
        *,
        data: FieldData,
        controls: Controls,
        status: SubmissionStatus,
        spam: Score,
    ) -> Submission:
        return Submission(
            # A request that wrote files has named its submission already: they are
            # stored under its id.
            submission_id=files.sink.submission_id
            if files.sink is not None
            else self._new_submission_id(now),
            form_id=form.form_id,
            workspace_id=form.workspace_id,
            status=status,
            data=data,
            created_at=now,
            subject=controls.subject,
            reply_to=validation.reply_address(data, controls.reply_to),
            spam_score=spam.points,
            client_ip=stored_client_ip(request.client_ip, self._settings.client_ip),
            files=files.stored,
            spam_reasons=spam.reasons,
        )

    def _plan(
        self,
        submission: Submission,
        context: FormContext,
        request: SubmitRequest,
        claim: IdempotencyClaim,
        now: datetime,
    ) -> CommitPlan:
        return commit_plan(
            submission,
            OutboxEvent.for_submission(self._new_event_id(now), submission, self._signer),
            workspace=context.workspace,
            target=request.target,
            claim=claim,
            plans=self._settings.plans,
            storage_limit=self._settings.storage_limit,
            now=now,
        )

    async def _commit(
        self, plan: CommitPlan, files: _RequestFiles, *, decoy: bool, now: datetime
    ) -> CommitResult | HoneypotResult:
        started = self._commit_timing.start()
        if decoy:
            hit = await self._store.submissions.record_honeypot(honeypot_hit(plan, now))
            await self._commit_timing.stretch_decoy(started)
            return hit
        files.keep = True  # from here on, a failure may hide a stored submission
        result = await self._store.submissions.commit(plan)
        files.keep = isinstance(result, Committed)
        if files.keep:
            self._commit_timing.real_committed(started)
        return result

    def _new_submission_id(self, now: datetime) -> str:
        return ids.submission_id(
            int(now.timestamp() * 1000), self._ids.random_bytes(ids.SUBMISSION_RANDOM_BYTES)
        )

    def _new_event_id(self, now: datetime) -> str:
        return ids.time_sorted_id(
            "evt", int(now.timestamp() * 1000), self._ids.random_bytes(ids.ID_RANDOM_BYTES)
        )
