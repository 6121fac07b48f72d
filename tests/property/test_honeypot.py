"""Property 5: a filled honeypot is answered like a success (same outcome type, status and
id format), also when retried, and keeps no submission, outbox row or quota (only its
Idempotency-Key, so that a retry replays); an empty one is no bot at all."""

from __future__ import annotations

import asyncio
import re

from attrs import frozen
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.model import FieldRule, RuleKind
from intake.service.messages import Accepted, Outcome
from intake.service.pipeline import PipelineSettings
from tests.property.strategies import (
    Sendable,
    Wire,
    field_values,
    open_body,
    payloads,
    sent_as,
)
from tests.property.world import CHALLENGE, UNLIMITED, Snapshot, World, public, request

SUBMISSION_ID = re.compile(r"^sub_[0-9a-hjkmnp-tv-z]{29}$")
TIME_PART = slice(4, 14)  # 48 bits of milliseconds: 10 base-32 characters


@frozen
class Hostility:
    """What the honeypot must win over: every check after it would refuse the request."""

    challenge_without_token: bool
    quota_used_up: bool
    required_field_missing: bool
    storage_failing: bool


@frozen
class HoneypotCase:
    trap: Sendable  # the payload with the honeypot filled in
    clean: Sendable  # the same payload without it
    idempotency_key: str | None
    hostility: Hostility


def filled() -> st.SearchStrategy[str]:
    """Present and non-empty is a bot, even when it is only spaces."""
    return field_values().filter(bool) | st.sampled_from([" ", "\t", "false", "0"])


def hostilities() -> st.SearchStrategy[Hostility]:
    return st.builds(
        Hostility,
        challenge_without_token=st.booleans(),
        quota_used_up=st.booleans(),
        required_field_missing=st.booleans(),
        storage_failing=st.booleans(),
    )


@st.composite
def honeypot_cases(draw: st.DrawFn, honeypot: st.SearchStrategy[str]) -> HoneypotCase:
    payload = draw(payloads())
    if draw(st.booleans()):
        payload["_next"] = ["https://shop.example/thanks"]
    wire = draw(st.sampled_from(Wire))
    trap = {**payload, "_gotcha": [draw(honeypot)]}
    return HoneypotCase(
        trap=draw(sent_as(trap, wire)),
        clean=draw(sent_as(payload, wire)),
        idempotency_key=draw(st.none() | st.just("retry-1")),
        hostility=draw(hostilities()),
    )


NO_HOSTILITY = Hostility(False, False, False, False)


@frozen
class Submitted:
    world: World
    outcomes: list[Outcome]
    before: Snapshot  # before the first request
    after: Snapshot  # after the last


async def _submit(bodies: list[Sendable], key: str | None, worst: Hostility) -> Submitted:
    """The bodies one after the other, in a world as hostile as `worst`."""
    world = World.build(PipelineSettings(rate_limits=UNLIMITED))
    workspace = await world.workspace(monthly_limit=0 if worst.quota_used_up else None)
    form = await world.seed.form(
        workspace.workspace_id,
        challenge=CHALLENGE if worst.challenge_without_token else None,
        rules=[FieldRule("required-but-absent", RuleKind.REQUIRED)]
        if worst.required_field_missing
        else [],
    )
    world.store.submissions.fail_commits = 1 if worst.storage_failing else 0
    before = await world.snapshot([workspace], [form], key)
    outcomes = [
        await world.submit(request(public(form), open_body(body), idempotency_key=key))
        for body in bodies
    ]
    after = await world.snapshot([workspace], [form], key)
    return Submitted(world, outcomes, before, after)


def _kept_nothing(trap: Submitted, decoy: str, key: str | None) -> None:
    """No submission, outbox row or quota; with a key, the key alone, for a retry."""
    assert trap.after.kept == trap.before.kept
    assert asyncio.run(trap.world.store.submissions.get(decoy)) is None
    assert trap.world.store.outbox_for(decoy) == []
    records = [r for r in trap.after.idempotency if r is not None]
    assert [r.submission_id for r in records] == ([decoy] if key is not None else [])


@given(honeypot_cases(filled()))
def test_the_honeypot_answer_cannot_be_told_from_a_success(case: HoneypotCase) -> None:
    trap = asyncio.run(_submit([case.trap], case.idempotency_key, case.hostility))
    real = asyncio.run(_submit([case.clean], case.idempotency_key, NO_HOSTILITY))
    (trapped,), (success,) = trap.outcomes, real.outcomes

    assert isinstance(trapped, Accepted), trapped
    assert isinstance(success, Accepted), success
    assert (trapped.status, trapped.replayed) == (success.status, success.replayed) == (201, False)
    assert trapped.next_url == success.next_url
    assert SUBMISSION_ID.match(trapped.submission_id)
    assert SUBMISSION_ID.match(success.submission_id)
    # Made at the same moment, the two ids sort the same way by time.
    assert trapped.submission_id[TIME_PART] == success.submission_id[TIME_PART]
    _kept_nothing(trap, trapped.submission_id, case.idempotency_key)


def _shape(outcomes: list[Outcome]) -> list[tuple[object, ...]]:
    """What a client sees of a sequence: status, code, and which answers share an id."""
    ids = [o.submission_id for o in outcomes if isinstance(o, Accepted)]
    return [
        (o.status, o.replayed, ids.index(o.submission_id))
        if isinstance(o, Accepted)
        else (o.rejection.status, o.rejection.code)
        for o in outcomes
    ]


@given(honeypot_cases(filled()))
def test_a_retried_honeypot_is_answered_as_a_retried_success(case: HoneypotCase) -> None:
    """Retried with its Idempotency-Key, the look-alike replays (200, same id), and the
    key used with another payload is a conflict, exactly as for a real submission."""
    key = "retry-1"
    trap = asyncio.run(_submit([case.trap, case.trap, case.clean], key, case.hostility))
    real = asyncio.run(_submit([case.clean, case.clean, case.trap], key, NO_HOSTILITY))

    assert _shape(trap.outcomes) == _shape(real.outcomes)
    assert _shape(real.outcomes)[:2] == [(201, False, 0), (200, True, 0)]
    first = trap.outcomes[0]
    assert isinstance(first, Accepted)
    _kept_nothing(trap, first.submission_id, key)


@given(honeypot_cases(st.just("")))
def test_an_empty_honeypot_is_an_ordinary_success(case: HoneypotCase) -> None:
    submitted = asyncio.run(_submit([case.trap], case.idempotency_key, NO_HOSTILITY))

    (outcome,) = submitted.outcomes
    assert isinstance(outcome, Accepted), outcome
    assert asyncio.run(submitted.world.store.submissions.get(outcome.submission_id)) is not None
    assert len(submitted.world.store.outbox_for(outcome.submission_id)) == 1
