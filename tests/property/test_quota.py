"""Property 4: the monthly ceiling is never passed. Over any sequence of submissions
(accepted, spam, unverified, honeypot), plan changes and passing months, accepted
submissions per workspace and month stay within the ceiling, and only they count; N
concurrent submissions against R remaining commit exactly min(N, R)."""

from __future__ import annotations

import asyncio
import enum
from collections import Counter
from datetime import UTC, datetime

from attrs import frozen
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.errors import ErrorCode
from intake.domain.model import Form, Plan, SubmissionStatus, Workspace
from intake.domain.quota import PlanTerms, period
from intake.domain.steps import Step
from intake.service.admin import WorkspaceChanges
from intake.service.messages import Accepted, FieldsBody, Refused
from intake.service.pipeline import PipelineSettings
from tests.property.strategies import (
    Wire,
    encode,
    monthly_limits,
    open_body,
    small_plans,
)
from tests.property.world import (
    CHALLENGE,
    FLAKY_TOKEN,
    UNLIMITED,
    World,
    public,
    request,
)

SPAM = "Buy now, click here: casino and viagra at http://a.example and http://b.example"


class Kind(enum.Enum):
    ACCEPTED = "accepted"
    SPAM = "spam"  # scored over the threshold: kept, uses no quota
    UNVERIFIED = "unverified"  # the challenge provider timed out: kept, uses no quota
    HONEYPOT = "honeypot"  # a look-alike success: nothing kept


@frozen
class Submit:
    workspace: int
    kind: Kind
    wire: Wire


@frozen
class Wait:
    hours: int


@frozen
class NextMonth:
    day: int


@frozen
class Reprice:
    workspace: int
    plan: Plan
    monthly_limit: int | None


Operation = Submit | Wait | NextMonth | Reprice


@frozen
class Story:
    plans: dict[Plan, PlanTerms]
    workspaces: tuple[tuple[Plan, int | None], ...]
    operations: list[Operation]


def operations() -> st.SearchStrategy[Operation]:
    return st.one_of(
        st.builds(
            Submit,
            workspace=st.integers(0, 1),
            kind=st.sampled_from(Kind),
            wire=st.sampled_from(Wire),
        ),
        st.builds(Wait, hours=st.integers(1, 24 * 20)),
        st.builds(NextMonth, day=st.integers(1, 28)),
        st.builds(
            Reprice,
            workspace=st.integers(0, 1),
            plan=st.sampled_from(Plan),
            monthly_limit=monthly_limits(),
        ),
    )


def stories() -> st.SearchStrategy[Story]:
    return st.builds(
        Story,
        plans=small_plans(),
        workspaces=st.tuples(*[st.tuples(st.sampled_from(Plan), monthly_limits())] * 2),
        operations=st.lists(operations(), max_size=40),
    )


@frozen
class Tenant:
    workspace: Workspace
    plain: Form
    challenged: Form


def _fields(kind: Kind, n: int) -> dict[str, list[str]]:
    fields = {"name": ["Ada"], "message": [SPAM if kind is Kind.SPAM else f"Hello, note {n}"]}
    if kind is Kind.HONEYPOT:
        fields["_gotcha"] = ["bot"]
    if kind is Kind.UNVERIFIED:
        fields["cf-turnstile-response"] = [FLAKY_TOKEN]
    return fields


def _next_month(moment: datetime, day: int) -> datetime:
    year, month = (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
    return datetime(year, month, day, 9, 30, tzinfo=UTC)


async def _tell(story: Story) -> None:
    world = World.build(PipelineSettings(rate_limits=UNLIMITED, plans=story.plans))
    tenants = []
    for plan, limit in story.workspaces:
        workspace = await world.workspace(plan, limit)
        plain = await world.seed.form(workspace.workspace_id)
        challenged = await world.seed.form(workspace.workspace_id, challenge=CHALLENGE)
        tenants.append(Tenant(workspace, plain, challenged))
    used: Counter[tuple[str, str]] = Counter()  # the model: accepted per workspace-month

    for n, operation in enumerate(story.operations):
        if isinstance(operation, Wait):
            world.clock.advance(operation.hours * 3600)
        elif isinstance(operation, NextMonth):
            world.clock.set(_next_month(world.clock.now(), operation.day))
        elif isinstance(operation, Reprice):
            tenant = tenants[operation.workspace]
            workspace = await world.seed.change_workspace(
                tenant.workspace.workspace_id,
                WorkspaceChanges(plan=operation.plan, monthly_limit=operation.monthly_limit),
            )
            tenants[operation.workspace] = Tenant(workspace, tenant.plain, tenant.challenged)
        else:
            await _submit(world, tenants[operation.workspace], operation, n, used)

        for tenant in tenants:
            month = (tenant.workspace.workspace_id, period(world.clock.now()))
            assert await world.usage(tenant.workspace.workspace_id) == used[month]

    # What is stored agrees: accepted submissions per workspace-month are the usage, and
    # spam and unverified ones are stored but never counted.
    stored: Counter[tuple[str, str]] = Counter()
    for tenant in tenants:
        for form in (tenant.plain, tenant.challenged):
            async for submission in world.store.submissions.iterate(form.form_id):
                if submission.status is SubmissionStatus.ACCEPTED:
                    stored[(submission.workspace_id, period(submission.created_at))] += 1
    assert +stored == +used


async def _submit(
    world: World, tenant: Tenant, operation: Submit, n: int, used: Counter[tuple[str, str]]
) -> None:
    form = tenant.challenged if operation.kind is Kind.UNVERIFIED else tenant.plain
    body = open_body(encode(_fields(operation.kind, n), operation.wire))
    month = (tenant.workspace.workspace_id, period(world.clock.now()))
    ceiling = world.ceiling(tenant.workspace)

    outcome = await world.submit(request(public(form), body))

    if operation.kind is Kind.ACCEPTED and used[month] >= ceiling:
        assert isinstance(outcome, Refused), outcome
        assert (outcome.rejection.code, outcome.step) == (ErrorCode.QUOTA_EXCEEDED, Step.QUOTA)
        return
    assert isinstance(outcome, Accepted), outcome
    stored = await world.store.submissions.get(outcome.submission_id)
    if operation.kind is Kind.HONEYPOT:
        assert stored is None
        return
    assert stored is not None
    assert stored.status.value == operation.kind.value
    if operation.kind is Kind.ACCEPTED:
        used[month] += 1
        assert used[month] <= ceiling


@given(stories())
def test_accepted_submissions_never_pass_the_monthly_ceiling(story: Story) -> None:
    asyncio.run(_tell(story))


@frozen
class Rush:
    already_used: int
    remaining: int
    accepted: int  # submissions that would use quota, sent at once
    spam: int  # flagged ones sent alongside them, which use none
    wire: Wire


def rushes() -> st.SearchStrategy[Rush]:
    return st.builds(
        Rush,
        already_used=st.integers(0, 3),
        remaining=st.integers(0, 6),
        accepted=st.integers(1, 12),
        spam=st.integers(0, 3),
        wire=st.sampled_from(Wire),
    )


async def _rush(rush: Rush) -> None:
    world = World.build(PipelineSettings(rate_limits=UNLIMITED))
    workspace = await world.workspace(Plan.FREE, rush.already_used + rush.remaining)
    form = await world.seed.form(workspace.workspace_id)
    for n in range(rush.already_used):
        earlier = await world.submit(request(public(form), FieldsBody({"n": str(n)})))
        assert isinstance(earlier, Accepted)

    kinds = [Kind.ACCEPTED] * rush.accepted + [Kind.SPAM] * rush.spam
    outcomes = await asyncio.gather(
        *(
            world.submit(
                request(
                    public(form),
                    # Every chunk hands the loop over, so the requests really interleave.
                    open_body(encode(_fields(kind, n), rush.wire), yield_between=True),
                    client_ip=f"198.51.100.{n}",
                )
            )
            for n, kind in enumerate(kinds)
        )
    )

    committed = [o for o, k in zip(outcomes, kinds, strict=True) if k is Kind.ACCEPTED]
    accepted = [o for o in committed if isinstance(o, Accepted)]
    refused = [o for o in committed if isinstance(o, Refused)]
    assert len(accepted) == min(rush.accepted, rush.remaining)
    assert all(o.rejection.code is ErrorCode.QUOTA_EXCEEDED for o in refused)
    assert len(accepted) + len(refused) == rush.accepted
    spam = [o for o, k in zip(outcomes, kinds, strict=True) if k is Kind.SPAM]
    assert all(isinstance(o, Accepted) for o in spam)
    assert await world.usage(workspace.workspace_id) == rush.already_used + len(accepted)
    assert world.store.count_submissions() == rush.already_used + len(accepted) + rush.spam


@given(rushes())
def test_concurrent_submissions_commit_exactly_as_many_as_remain(rush: Rush) -> None:
    asyncio.run(_rush(rush))
