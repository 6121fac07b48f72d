"""A filled honeypot goes the way of a real submission up to the store: the same steps,
and one write of the same kind as a commit (a HoneypotHit, in a transaction of its own),
so that neither its answer nor the time it takes tells a bot it was caught; and that
write keeps no submission, outbox row or quota count."""

from __future__ import annotations

from typing import Any

import pytest

from intake.adapters.memory.submissions import InMemorySubmissions
from intake.domain import scoring, validation
from intake.domain.errors import ErrorCode
from intake.domain.model import FieldRule, FieldValue, Form, RuleKind
from intake.domain.quota import period
from intake.ports.submissions import (
    CommitPlan,
    CommitResult,
    FormCheck,
    FormRefused,
    HoneypotHit,
    HoneypotResult,
)
from intake.service.messages import Accepted, FieldsBody, Refused
from tests.property.world import CHALLENGE, World, public, request

pytestmark = pytest.mark.anyio

FIELDS: dict[str, FieldValue] = {"email": "ada@example.com", "message": "Hello"}
BOT = FieldsBody({**FIELDS, "_gotcha": "filled"})
PERSON = FieldsBody(FIELDS)


class Recording:
    """The fake's submissions, noting every write the pipeline asks of the store, and
    answering the honeypot's with `answer` once set."""

    def __init__(self, inner: InMemorySubmissions) -> None:
        self.inner = inner
        self.writes: list[tuple[str, object]] = []
        self.answer: HoneypotResult | None = None

    async def commit(self, plan: CommitPlan) -> CommitResult:
        self.writes.append(("commit", plan))
        return await self.inner.commit(plan)

    async def record_honeypot(self, hit: HoneypotHit) -> HoneypotResult:
        self.writes.append(("record_honeypot", hit))
        if self.answer is not None:
            return self.answer
        return await self.inner.record_honeypot(hit)

    async def claim_key(self, *args: Any) -> object:
        self.writes.append(("claim_key", args))
        return await self.inner.claim_key(*args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


async def _world(**form_options: Any) -> tuple[World, Recording, Form]:
    world = World.build()
    recording = Recording(world.store.submissions)
    world.store.submissions = recording  # type: ignore[assignment]
    workspace = await world.workspace()
    form = await world.seed.form(workspace.workspace_id, **form_options)
    return world, recording, form


@pytest.mark.parametrize("key", [None, "order-1"])
async def test_a_filled_honeypot_makes_one_write_as_a_real_submission_does(
    key: str | None,
) -> None:
    world, recording, form = await _world()

    trapped = await world.submit(request(public(form), BOT, idempotency_key=key))
    real = await world.submit(request(public(form), PERSON, idempotency_key="other"))

    assert isinstance(trapped, Accepted)
    assert isinstance(real, Accepted)
    assert [name for name, _ in recording.writes] == ["record_honeypot", "commit"]
    hit = recording.writes[0][1]
    assert isinstance(hit, HoneypotHit)
    assert hit.form_id == form.form_id
    assert hit.day == world.clock.now().date().isoformat()
    assert hit.check == FormCheck(form.form_id, form.public_form_key)
    if key is None:
        assert hit.idempotency is None
    else:
        assert hit.idempotency is not None
        assert (hit.idempotency.key, hit.idempotency.submission_id) == (
            key,
            trapped.submission_id,
        )


async def test_the_honeypots_write_keeps_a_count_and_no_submission_outbox_or_quota() -> None:
    world, _, form = await _world()
    workspace_id = form.workspace_id

    first = await world.submit(request(public(form), BOT))
    second = await world.submit(request(public(form), BOT, idempotency_key="k"))

    assert isinstance(first, Accepted)
    assert isinstance(second, Accepted)
    assert await world.store.submissions.honeypot_hits(form.form_id) == {
        world.clock.now().date().isoformat(): 2
    }
    assert world.store.count_submissions() == 0
    assert world.store.count_outbox() == 0
    assert await world.store.workspaces.usage(workspace_id, period(world.clock.now())) == 0


async def test_a_honeypot_runs_validation_and_scoring_and_ignores_their_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world, recording, form = await _world(rules=[FieldRule("phone", RuleKind.REQUIRED)])
    calls: list[str] = []
    validate, score = validation.validate, scoring.score

    def counting_validate(*args: Any, **kwargs: Any) -> dict[str, str]:
        calls.append("validate")
        return validate(*args, **kwargs)

    def counting_score(*args: Any, **kwargs: Any) -> Any:
        calls.append("score")
        return score(*args, **kwargs)

    monkeypatch.setattr(validation, "validate", counting_validate)
    monkeypatch.setattr("intake.service.spam_scoring.score", counting_score)

    outcome = await world.submit(request(public(form), BOT))  # `phone` is missing

    assert isinstance(outcome, Accepted)
    assert calls == ["validate", "score"]
    assert [name for name, _ in recording.writes] == ["record_honeypot"]


async def test_a_honeypot_never_spends_a_challenge_call() -> None:
    world, recording, form = await _world(challenge=CHALLENGE)

    outcome = await world.submit(request(public(form), BOT))  # no token at all

    assert isinstance(outcome, Accepted)
    assert world.verifier.calls == []
    assert [name for name, _ in recording.writes] == ["record_honeypot"]


async def test_a_honeypot_on_a_form_changed_since_its_lookup_is_refused_as_a_commit() -> None:
    world, recording, form = await _world()
    recording.answer = FormRefused(ErrorCode.FORM_DISABLED)

    outcome = await world.submit(request(public(form), BOT))

    assert isinstance(outcome, Refused)
    assert outcome.rejection.code is ErrorCode.FORM_DISABLED
