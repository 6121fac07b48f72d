"""Properties 2 and 3 over sequences: a 201 or 200 exists exactly when one submission and
one outbox row exist for its id, except the honeypot's look-alike and its replays, for
which none exists; a replay creates nothing; a refusal leaves the store as it was, and
the honeypot keeps its Idempotency-Key alone."""

from __future__ import annotations

import asyncio
import enum

from attrs import frozen
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.errors import ErrorCode
from intake.domain.idempotency import RETENTION
from intake.domain.model import FieldData
from intake.domain.steps import Step
from intake.service.messages import Accepted, Refused
from intake.service.pipeline import PipelineSettings
from tests.property.strategies import (
    Payload,
    Wire,
    WireBody,
    as_fields,
    encode,
    idempotency_keys,
    open_body,
    payloads,
)
from tests.property.world import UNLIMITED, World, public, request


class Trouble(enum.Enum):
    NONE = "none"
    INVALID_FIELD = "an invalid email field"  # 422, step 9
    STORAGE = "the commit fails"  # 503, step 12
    UNSUPPORTED = "an unsupported content type"  # 415, step 5


@frozen
class Send:
    payload: int
    wire: Wire
    key: int | None
    honeypot: bool
    trouble: Trouble


@frozen
class Wait:
    hours: int


Operation = Send | Wait


def sends(pool: int) -> st.SearchStrategy[Send]:
    return st.builds(
        Send,
        payload=st.integers(0, pool - 1),
        wire=st.sampled_from(Wire),
        key=st.none() | st.integers(0, 1),
        honeypot=st.booleans(),
        trouble=st.sampled_from(Trouble),
    ).filter(lambda s: s.wire is not Wire.FIELDS or s.trouble is not Trouble.UNSUPPORTED)


@frozen
class Story:
    payloads: list[Payload]
    keys: list[str]
    operations: list[Operation]


@st.composite
def stories(draw: st.DrawFn) -> Story:
    pool = draw(st.lists(payloads(max_size=3), min_size=1, max_size=3))
    keys = draw(st.lists(idempotency_keys(), min_size=2, max_size=2, unique=True))
    waits = st.builds(Wait, hours=st.sampled_from([1, 12, 23, 24, 25, 48]))
    operations = draw(st.lists(sends(len(pool)) | waits, max_size=25))
    return Story(pool, keys, operations)


@frozen
class Remembered:
    fields: FieldData
    submission_id: str
    at_hour: int


def _fields(story: Story, send: Send) -> Payload:
    payload = dict(story.payloads[send.payload])
    if send.trouble is Trouble.INVALID_FIELD:
        payload["email"] = ["not-an-address"]
    if send.honeypot:
        payload["_gotcha"] = ["bot"]
    return payload


async def _tell(story: Story) -> None:
    world = World.build(PipelineSettings(rate_limits=UNLIMITED))
    workspace = await world.workspace()
    form = await world.seed.form(workspace.workspace_id)
    created: set[str] = set()
    decoys: set[str] = set()  # the honeypot's look-alike ids
    remembered: dict[str, Remembered] = {}
    hour = 0

    for operation in story.operations:
        if isinstance(operation, Wait):
            world.clock.advance(operation.hours * 3600)
            hour += operation.hours
            continue
        payload = _fields(story, operation)
        body = encode(payload, operation.wire)
        if operation.trouble is Trouble.UNSUPPORTED:
            assert isinstance(body, WireBody)
            body = WireBody("text/plain", body.data)
        if operation.trouble is Trouble.STORAGE:
            world.store.submissions.fail_commits = 1
        key = None if operation.key is None else story.keys[operation.key]
        before = await world.snapshot([workspace], [form], key)

        outcome = await world.submit(request(public(form), open_body(body), idempotency_key=key))

        world.store.submissions.fail_commits = 0
        after = await world.snapshot([workspace], [form], key)
        earlier = remembered.get(key) if key is not None else None
        if earlier is not None and (hour - earlier.at_hour) * 3600 >= RETENTION.total_seconds():
            earlier = None

        if operation.trouble is Trouble.UNSUPPORTED:
            assert isinstance(outcome, Refused)
            assert outcome.step is Step.CONTENT_TYPE_AND_SIZE
        elif earlier is not None:
            if earlier.fields == as_fields(payload):
                assert isinstance(outcome, Accepted), outcome
                assert (outcome.status, outcome.submission_id) == (200, earlier.submission_id)
            else:
                assert isinstance(outcome, Refused)
                assert outcome.rejection.code is ErrorCode.IDEMPOTENCY_CONFLICT
        elif operation.honeypot:
            assert isinstance(outcome, Accepted)
            assert outcome.status == 201
        elif operation.trouble is Trouble.INVALID_FIELD:
            assert isinstance(outcome, Refused)
            assert outcome.rejection.code is ErrorCode.VALIDATION_FAILED
        elif operation.trouble is Trouble.STORAGE:
            assert isinstance(outcome, Refused)
            assert outcome.rejection.code is ErrorCode.SERVICE_UNAVAILABLE
        else:
            assert isinstance(outcome, Accepted), outcome
            assert outcome.status == 201

        if isinstance(outcome, Refused):
            assert after == before, outcome
        elif outcome.status == 200:
            assert outcome.submission_id in created | decoys
            assert after == before
        elif operation.honeypot:
            assert outcome.submission_id not in created
            assert await world.store.submissions.get(outcome.submission_id) is None
            assert after.kept == before.kept
            decoys.add(outcome.submission_id)
            if key is not None:
                remembered[key] = Remembered(as_fields(payload), outcome.submission_id, hour)
        else:
            assert outcome.submission_id not in created
            created.add(outcome.submission_id)
            assert (after.submissions, after.outbox) == (before.submissions + 1, before.outbox + 1)
            if key is not None:
                remembered[key] = Remembered(as_fields(payload), outcome.submission_id, hour)

    stored = {s.submission_id async for s in world.store.submissions.iterate(form.form_id)}
    assert stored == created
    assert not decoys & created
    assert world.store.count_outbox() == world.store.count_submissions() == len(created)
    for submission_id in created:
        assert len(world.store.outbox_for(submission_id)) == 1


@given(stories())
def test_every_success_has_exactly_one_submission_and_one_outbox_row(story: Story) -> None:
    asyncio.run(_tell(story))
