"""The pipeline hands the store the form as steps 1 and 2 found it, and a store that finds
it changed at the commit (PostgreSQL, whose lookups may come from a cache) turns the
request into the refusal those steps would give now."""

from __future__ import annotations

import pytest

from intake.adapters.memory.submissions import InMemorySubmissions
from intake.domain.errors import ErrorCode
from intake.domain.steps import Step
from intake.ports.submissions import CommitPlan, CommitResult, FormCheck, FormRefused
from intake.service.messages import Accepted, FieldsBody, Refused, ServerTarget
from tests.property.world import World, public, request

pytestmark = pytest.mark.anyio

FIELDS = FieldsBody({"email": "ada@example.com", "message": "Hello"})


class Checking:
    """The fake's submissions, answering commits with `answer` once set, and keeping
    the plans it was given."""

    def __init__(self, inner: InMemorySubmissions) -> None:
        self.inner = inner
        self.plans: list[CommitPlan] = []
        self.answer: CommitResult | None = None

    async def commit(self, plan: CommitPlan) -> CommitResult:
        self.plans.append(plan)
        if self.answer is not None:
            return self.answer
        return await self.inner.commit(plan)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def _world() -> tuple[World, Checking]:
    world = World.build()
    checking = Checking(world.store.submissions)
    world.store.submissions = checking  # type: ignore[assignment]
    return world, checking


async def test_the_commit_is_asked_to_check_the_form_and_the_key_it_was_reached_by() -> None:
    world, checking = _world()
    workspace = await world.workspace()
    form = await world.seed.form(workspace.workspace_id)
    key = await world.seed.key(workspace.workspace_id)

    public_outcome = await world.submit(request(public(form), FIELDS))
    server_outcome = await world.submit(
        request(ServerTarget(form.form_id, f"Bearer {key.secret}"), FIELDS)
    )

    assert isinstance(public_outcome, Accepted)
    assert isinstance(server_outcome, Accepted)
    assert [plan.check for plan in checking.plans] == [
        FormCheck(form.form_id, form.public_form_key),
        FormCheck(form.form_id, None),
    ]


@pytest.mark.parametrize(
    ("code", "step"),
    [
        (ErrorCode.FORM_DISABLED, Step.CHECK_ENABLED),
        (ErrorCode.FORM_NOT_FOUND, Step.RESOLVE_FORM),
        (ErrorCode.UNAUTHORIZED, Step.RESOLVE_FORM),
    ],
)
async def test_a_form_found_changed_at_the_commit_is_refused_as_its_step_would(
    code: ErrorCode, step: Step
) -> None:
    world, checking = _world()
    workspace = await world.workspace()
    form = await world.seed.form(workspace.workspace_id)
    checking.answer = FormRefused(code)

    outcome = await world.submit(request(public(form), FIELDS))

    assert isinstance(outcome, Refused)
    assert outcome.rejection.code is code
    assert outcome.step is step
    assert world.store.count_submissions() == 0
