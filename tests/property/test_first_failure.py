"""Property 1 (with 2 and 3 along the way): whatever subset of the checks of part 4.3
fails, the answer is the error of the first failing check, reported at its step; a
refusal stores nothing, and a success stores one submission with one outbox row."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime

import pytest
from attrs import frozen
from hypothesis import event, given

from intake.domain.errors import ErrorCode
from intake.domain.idempotency import Route, scope
from intake.domain.model import FieldRule, Form, FormMode, RuleKind, SubmissionStatus, Workspace
from intake.domain.ratelimit import public_windows, server_windows
from intake.domain.steps import STEP_CODES, Step
from intake.service.messages import (
    Accepted,
    FieldsBody,
    Outcome,
    PublicTarget,
    Refused,
    ServerTarget,
)
from intake.service.pipeline import PipelineSettings
from tests.property.strategies import (
    EXPECTED,
    LIMITS,
    Endpoint,
    FailurePlan,
    Fault,
    Payload,
    Sendable,
    Wire,
    WireBody,
    applies,
    encode,
    encode_multipart,
    failure_plans,
    lone_fault,
    open_body,
    pairs,
)
from tests.property.world import (
    ALLOWED_ORIGIN,
    CHALLENGE,
    CLIENT,
    PASSING_TOKEN,
    REJECTED_TOKEN,
    Snapshot,
    World,
    public,
    request,
)

SUBMISSION_ID = re.compile(r"^sub_[0-9a-hjkmnp-tv-z]{29}$")
NEVER_SPAM = 1e9  # scoring never refuses; here it must not turn a success into spam either


@frozen
class Arranged:
    world: World
    workspace: Workspace
    form: Form
    target: PublicTarget | ServerTarget
    body: Sendable
    origin: str | None
    token_header: str | None


def _payload(plan: FailurePlan, token: str | None) -> Payload:
    payload: Payload = {}
    if plan.has(Fault.STREAMED_TOO_LONG):
        payload["pad"] = ["x" * (LIMITS.max_body + 1)]
    if not plan.has(Fault.REQUIRED_FIELD_MISSING):
        payload["name"] = ["Ada"]
    payload["message"] = ["Hello there"]
    payload.update(plan.extra)
    if plan.has(Fault.EMAIL_INVALID):
        payload["email"] = ["not-an-address"]
    if plan.has(Fault.FIELD_TOO_LONG):
        payload["essay"] = ["x" * (LIMITS.max_value + 1)]
    if plan.has(Fault.HONEYPOT_FILLED):
        payload["_gotcha"] = ["I am a bot"]
    if token is not None and not plan.token_in_header:
        payload["cf-turnstile-response"] = [token]
    return payload


def _body(plan: FailurePlan, payload: Payload) -> Sendable:
    body = encode(payload, plan.wire)
    if isinstance(body, FieldsBody):
        return body
    data = body.data
    if plan.has(Fault.FILE_UPLOADED):
        data = encode_multipart(pairs(payload), files=[("cv", "cv.pdf", b"%PDF-1.7")])
    if plan.has(Fault.BROKEN_BODY):
        if plan.wire is Wire.URLENCODED:
            data += b"&broken=%FF"  # not UTF-8 once decoded
        elif plan.wire is Wire.JSON:
            data = data[:-1]  # the closing brace is missing
        else:
            data = encode_multipart(pairs(payload), close=False)
    content_type = body.content_type
    if plan.has(Fault.UNSUPPORTED_CONTENT_TYPE):
        content_type = "text/plain"
    elif plan.has(Fault.MISSING_CONTENT_TYPE):
        content_type = None
    declared = len(data) if plan.declare_length else None
    if plan.has(Fault.DECLARED_TOO_LONG):
        ceiling = LIMITS.max_multipart_body if plan.wire is Wire.MULTIPART else LIMITS.max_body
        declared = ceiling + 1
    elif plan.has(Fault.STREAMED_TOO_LONG):
        declared = None
    return WireBody(content_type, data, plan.cuts, declared)


async def _arrange(plan: FailurePlan) -> Arranged:
    world = World.build(PipelineSettings())
    monthly_limit = None
    if plan.has(Fault.QUOTA_LIMIT_ZERO):
        monthly_limit = 0
    elif plan.has(Fault.QUOTA_USED_UP):
        monthly_limit = plan.prefill
    workspace = await world.workspace(monthly_limit=monthly_limit)
    protected = plan.protected or plan.has(Fault.PROTECTED_FORM_ON_PUBLIC_ROUTE)
    form = await world.seed.form(
        workspace.workspace_id,
        mode=FormMode.PROTECTED if protected else FormMode.PUBLIC,
        allowed_origins=[ALLOWED_ORIGIN] if plan.origin_list else [],
        rules=[FieldRule("name", RuleKind.REQUIRED)],
        challenge=CHALLENGE if plan.challenge else None,
        spam_threshold=NEVER_SPAM,
    )
    created = await world.seed.key(workspace.workspace_id)

    if plan.has(Fault.QUOTA_USED_UP):
        sibling = await world.seed.form(workspace.workspace_id)
        for n in range(plan.prefill):
            earlier = await world.submit(request(public(sibling), FieldsBody({"n": str(n)})))
            assert isinstance(earlier, Accepted)
    if plan.has(Fault.FORM_PAUSED):
        form = await world.seed.disable(form.form_id)
    if plan.has(Fault.WORKSPACE_SUSPENDED):
        workspace = await world.seed.set_active(workspace.workspace_id, False)
    if plan.has(Fault.REVOKED_API_KEY):
        await world.seed.revoke(created.key.key_id)
    if plan.has(Fault.RATE_LIMIT_EXHAUSTED):
        limits = world.settings.rate_limits
        world.exhaust_rate_limit(
            public_windows(limits, form.form_id, CLIENT)
            if plan.route is Endpoint.PUBLIC
            else server_windows(limits, form.form_id, created.key.key_id)
        )
    if plan.has(Fault.STORAGE_FAILS):
        world.store.submissions.fail_commits = 1

    target: PublicTarget | ServerTarget
    if plan.route is Endpoint.PUBLIC:
        target = PublicTarget("no-such-key") if plan.has(Fault.UNKNOWN_PUBLIC_KEY) else public(form)
    else:
        form_id = form.form_id
        if plan.has(Fault.OTHER_WORKSPACES_FORM):
            other = await world.workspace()
            form_id = (await world.seed.form(other.workspace_id)).form_id
        elif plan.has(Fault.UNKNOWN_FORM_ID):
            form_id = "frm_doesnotexist"
        secret = created.secret
        authorization = f"Bearer {secret}"
        if plan.has(Fault.MALFORMED_AUTHORIZATION):
            authorization = f"Basic {secret}"
        target = ServerTarget(form_id, authorization)

    token: str | None = None
    if plan.has(Fault.CHALLENGE_REJECTED):
        token = REJECTED_TOKEN
    elif plan.challenge and not plan.has(Fault.CHALLENGE_MISSING):
        token = PASSING_TOKEN
    origin: str | None = None
    if plan.has(Fault.WRONG_ORIGIN):
        origin = "https://evil.example"
    elif plan.origin_list and not plan.has(Fault.MISSING_ORIGIN):
        origin = ALLOWED_ORIGIN
    body = _body(plan, _payload(plan, token))
    header_token = token if plan.token_in_header else None
    return Arranged(world, workspace, form, target, body, origin, header_token)


async def _submit(plan: FailurePlan) -> tuple[Arranged, Snapshot, Outcome, Snapshot]:
    arranged = await _arrange(plan)
    world, workspace, form = arranged.world, arranged.workspace, arranged.form
    before = await world.snapshot([workspace], [form], plan.idempotency_key)
    outcome = await world.submit(
        request(
            arranged.target,
            open_body(arranged.body),
            origin=arranged.origin,
            idempotency_key=plan.idempotency_key,
            challenge_token=arranged.token_header,
        )
    )
    after = await world.snapshot([workspace], [form], plan.idempotency_key)
    return arranged, before, outcome, after


@given(failure_plans())
def test_the_first_failing_check_decides_the_answer(plan: FailurePlan) -> None:
    event(f"first failing: {plan.first.value if plan.first else 'none'}")
    _, _, outcome, _ = asyncio.run(_submit(plan))
    _assert_first_failure_answers(plan, outcome)


LONE_FAULTS = [
    pytest.param(
        lone_fault(fault, route, wire),
        id=f"{fault.name if fault else 'NO_FAULT'}-{route.value}-{wire.value}",
    )
    for fault in [None, *Fault]
    for route in Endpoint
    for wire in Wire
    if fault is None or applies(fault, route, wire)
]


@pytest.mark.parametrize("plan", LONE_FAULTS)
def test_each_fault_alone_is_answered_with_its_own_error(plan: FailurePlan) -> None:
    """Every fault, on every route and wire format it applies to, as a fixed example."""
    arranged, before, outcome, after = asyncio.run(_submit(plan))
    _assert_first_failure_answers(plan, outcome)
    _assert_a_refusal_keeps_nothing(outcome, before, after)
    _assert_a_success_is_kept_once(arranged, plan, outcome, before, after)


@given(failure_plans())
def test_a_refused_request_stores_nothing(plan: FailurePlan) -> None:
    _, before, outcome, after = asyncio.run(_submit(plan))
    _assert_a_refusal_keeps_nothing(outcome, before, after)


@given(failure_plans())
def test_a_new_success_stores_one_submission_with_one_outbox_row(plan: FailurePlan) -> None:
    arranged, before, outcome, after = asyncio.run(_submit(plan))
    _assert_a_success_is_kept_once(arranged, plan, outcome, before, after)


def _assert_first_failure_answers(plan: FailurePlan, outcome: Outcome) -> None:
    first = plan.first
    if first is None:
        assert isinstance(outcome, Accepted), outcome
        assert outcome.status == 201
        return
    expected = EXPECTED[first]
    if expected.code is None:  # the honeypot: a look-alike success
        assert isinstance(outcome, Accepted), outcome
        assert (outcome.status, outcome.replayed) == (201, False)
        assert SUBMISSION_ID.match(outcome.submission_id)
        return
    assert isinstance(outcome, Refused), f"expected {expected.code} for {first}"
    assert (outcome.rejection.code, outcome.step) == (expected.code, expected.step), first
    assert outcome.rejection.code in STEP_CODES[outcome.step]


def _assert_a_refusal_keeps_nothing(outcome: Outcome, before: Snapshot, after: Snapshot) -> None:
    if not isinstance(outcome, Refused):
        return
    assert after == before
    if outcome.rejection.code in (ErrorCode.RATE_LIMITED, ErrorCode.SERVICE_UNAVAILABLE):
        assert outcome.rejection.retry_after is not None
        assert outcome.rejection.retry_after >= 1


def _assert_a_success_is_kept_once(
    arranged: Arranged, plan: FailurePlan, outcome: Outcome, before: Snapshot, after: Snapshot
) -> None:
    if not isinstance(outcome, Accepted):
        return
    store = arranged.world.store
    stored = asyncio.run(store.submissions.get(outcome.submission_id))
    if plan.first is Fault.HONEYPOT_FILLED:
        assert stored is None
        assert store.outbox_for(outcome.submission_id) == []
        assert after.kept == before.kept
        if plan.idempotency_key is not None:  # the key alone is kept, for a retry
            assert _record(arranged, plan) == outcome.submission_id
        return
    assert stored is not None
    assert stored.status is SubmissionStatus.ACCEPTED
    assert len(store.outbox_for(outcome.submission_id)) == 1
    assert (after.submissions, after.outbox) == (before.submissions + 1, before.outbox + 1)
    assert after.usage == tuple(n + 1 for n in before.usage)
    if plan.idempotency_key is not None:
        assert _record(arranged, plan) == outcome.submission_id


def _record(arranged: Arranged, plan: FailurePlan) -> str | None:
    """The submission id the request's Idempotency-Key is recorded with, if any."""
    assert plan.idempotency_key is not None
    route = Route.PUBLIC if plan.route is Endpoint.PUBLIC else Route.SERVER
    record = asyncio.run(
        arranged.world.store.submissions.find_idempotency(
            scope(route, arranged.form.form_id, CLIENT),
            plan.idempotency_key,
            datetime.min.replace(tzinfo=UTC),
        )
    )
    return None if record is None else record.submission_id


def test_every_check_can_be_made_to_fail() -> None:
    """The plans cover every step that has an error, and the honeypot."""
    checks = {EXPECTED[fault].check for fault in Fault}
    assert checks == {step for step in Step if STEP_CODES[step]} | {Step.HONEYPOT}
