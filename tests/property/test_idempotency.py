"""Property 6: a key replays its first answer for the same payload, whatever the content
type or the order of the fields on the wire, and refuses a different payload without
overwriting anything."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from intake.domain.errors import ErrorCode
from intake.domain.steps import Step
from intake.service.messages import Accepted, Refused
from intake.service.pipeline import PipelineSettings
from tests.property.strategies import (
    Payload,
    Sendable,
    Wire,
    as_fields,
    encode,
    idempotency_keys,
    open_body,
    payloads,
    sent_as,
)
from tests.property.world import UNLIMITED, World, public, request


async def _send_all(bodies: list[Sendable], key: str) -> tuple[World, list[Accepted | Refused]]:
    world = World.build(PipelineSettings(rate_limits=UNLIMITED))
    workspace = await world.workspace()
    form = await world.seed.form(workspace.workspace_id)
    outcomes = []
    for body in bodies:
        before = await world.snapshot([workspace], [form], key)
        outcomes.append(
            await world.submit(request(public(form), open_body(body), idempotency_key=key))
        )
        after = await world.snapshot([workspace], [form], key)
        if len(outcomes) > 1:
            assert after == before, "a replay or a conflict stores nothing"
    return world, outcomes


@st.composite
def same_payload_in_every_format(draw: st.DrawFn) -> list[Sendable]:
    payload = draw(payloads())
    formats = draw(st.permutations(list(Wire)))
    return [draw(sent_as(payload, wire)) for wire in formats]


@given(same_payload_in_every_format(), idempotency_keys())
def test_the_same_fields_in_any_format_replay_the_first_answer(
    bodies: list[Sendable], key: str
) -> None:
    world, outcomes = asyncio.run(_send_all(bodies, key))

    first, *replays = outcomes
    assert isinstance(first, Accepted), first
    assert (first.status, first.replayed) == (201, False)
    for replay in replays:
        assert isinstance(replay, Accepted), replay
        assert (replay.status, replay.replayed) == (200, True)
        assert replay.submission_id == first.submission_id
    assert world.store.count_submissions() == world.store.count_outbox() == 1


@st.composite
def two_different_payloads(draw: st.DrawFn) -> tuple[Payload, Payload]:
    first = draw(payloads())
    second = draw(payloads().filter(lambda p: as_fields(p) != as_fields(first)))
    return first, second


@given(two_different_payloads(), st.sampled_from(Wire), st.sampled_from(Wire), idempotency_keys())
def test_a_different_payload_under_the_same_key_is_a_conflict_that_overwrites_nothing(
    payloads_: tuple[Payload, Payload], first_wire: Wire, second_wire: Wire, key: str
) -> None:
    first_payload, second_payload = payloads_
    bodies = [
        encode(first_payload, first_wire),
        encode(second_payload, second_wire),
        encode(first_payload, second_wire),
    ]
    world, (first, conflict, replay) = asyncio.run(_send_all(bodies, key))

    assert isinstance(first, Accepted)
    assert isinstance(conflict, Refused)
    assert (conflict.rejection.code, conflict.step) == (ErrorCode.IDEMPOTENCY_CONFLICT, Step.PARSE)
    assert isinstance(replay, Accepted), "the first payload still replays"
    assert (replay.status, replay.submission_id) == (200, first.submission_id)
    stored = asyncio.run(world.store.submissions.get(first.submission_id))
    assert stored is not None
    assert stored.data == as_fields(first_payload)
