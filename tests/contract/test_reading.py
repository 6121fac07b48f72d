"""Reading submissions and outbox rows back: order, filters, batches, exact values."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from intake.domain.listing import SubmissionFilter
from intake.domain.model import FieldData, Submission, SubmissionStatus
from intake.ports.store import Store
from intake.ports.submissions import OutboxRow
from tests.contract.builders import event_for, form, plan, seed, submission

pytestmark = pytest.mark.anyio

ACCEPTED, SPAM, UNVERIFIED = (
    SubmissionStatus.ACCEPTED,
    SubmissionStatus.SPAM,
    SubmissionStatus.UNVERIFIED,
)


def only(status: SubmissionStatus) -> SubmissionFilter:
    return SubmissionFilter(frozenset({status}))


async def test_an_unknown_submission_is_none(store: Store) -> None:
    assert await store.submissions.get("sub_missing") is None


async def test_iterate_yields_a_forms_submissions_oldest_first(store: Store) -> None:
    await seed(store)
    subs = [submission(n) for n in range(8)]
    shuffled = subs[:]
    random.Random(7).shuffle(shuffled)
    for sub in shuffled:
        await store.submissions.commit(plan(sub))

    assert [s async for s in store.submissions.iterate("frm_1")] == subs


async def test_iterate_yields_only_the_forms_own_submissions(store: Store) -> None:
    await seed(store, form(), form("frm_2", public_form_key="pk2"))
    mine = [submission(n) for n in (1, 3)]
    theirs = [submission(n, form_id="frm_2") for n in (2, 4)]
    for sub in (*mine, *theirs):
        await store.submissions.commit(plan(sub))

    assert [s async for s in store.submissions.iterate("frm_1")] == mine
    assert [s async for s in store.submissions.iterate("frm_2")] == theirs
    assert [s async for s in store.submissions.iterate("frm_missing")] == []


async def test_iterate_filters_by_status(store: Store) -> None:
    await seed(store)
    statuses = [ACCEPTED, SPAM, UNVERIFIED, SPAM, ACCEPTED, SPAM]
    subs = [submission(n, status=status) for n, status in enumerate(statuses)]
    for sub in subs:
        await store.submissions.commit(plan(sub))

    for status in SubmissionStatus:
        expected = [sub for sub in subs if sub.status is status]
        got = [s async for s in store.submissions.iterate("frm_1", only(status))]
        assert got == expected


@pytest.mark.parametrize(("rows", "batch_size"), [(10, 3), (9, 3), (3, 3), (2, 3), (10, 1)])
async def test_iterate_crosses_batch_boundaries(store: Store, rows: int, batch_size: int) -> None:
    await seed(store)
    subs = [submission(n) for n in range(rows)]
    for sub in subs:
        await store.submissions.commit(plan(sub))

    got = [s async for s in store.submissions.iterate("frm_1", batch_size=batch_size)]

    assert got == subs


async def test_iterate_filters_by_status_across_batch_boundaries(store: Store) -> None:
    await seed(store)
    subs = [submission(n, status=SPAM if n % 3 else ACCEPTED) for n in range(20)]
    for sub in subs:
        await store.submissions.commit(plan(sub))

    got = [s async for s in store.submissions.iterate("frm_1", only(SPAM), batch_size=4)]

    assert got == [sub for sub in subs if sub.status is SPAM]


async def test_outbox_rows_are_listed_by_event_id_up_to_the_limit(store: Store) -> None:
    await seed(store)
    subs = [submission(n, status=SPAM if n == 2 else ACCEPTED) for n in range(5)]
    for sub in reversed(subs):
        await store.submissions.commit(plan(sub))

    rows = await store.submissions.outbox()
    first_two = await store.submissions.outbox(limit=2)

    assert rows == [OutboxRow(event_for(sub)) for sub in subs]
    assert all(row.published_at is None for row in rows)
    assert [row.event.event_type.value for row in rows][1:3] == [
        "submission.created",
        "submission.flagged",
    ]
    assert first_two == rows[:2]


async def test_an_empty_outbox_lists_nothing(store: Store) -> None:
    assert await store.submissions.outbox() == []


ROUND_TRIP_DATA: FieldData = {
    "name": "Zoë Ångström – 東京 🚀",
    "empty": "",
    "quote": 'She said "hi" \\ then\nleft\t',
    "nul": "a\x00b",
    "int": 42,
    "negative": -7,
    "big": 2**63 + 1,
    "float": 0.1 + 0.2,
    "tiny": 5e-324,
    "negative_zero": -0.0,
    "whole_float": 3.0,
    "true": True,
    "false": False,
    "none": None,
    "list": ["a", 1, 2.5, None, True, [], {}],
    "repeated": ["second", "first", "second"],
    "nested": {"deep": {"deeper": [{"k": "v"}, [1, [2, [3]]]]}, "emoji 🎉": "key too"},
}


async def test_submission_data_round_trips_exactly(store: Store) -> None:
    await seed(store)
    sub = submission(1, data=ROUND_TRIP_DATA)
    await store.submissions.commit(plan(sub))

    back = await store.submissions.get(sub.submission_id)

    assert back is not None
    assert back == sub
    assert back.data == ROUND_TRIP_DATA
    # Equality would let 1 == 1.0 == True through; the types must come back too.
    assert _typed(back.data) == _typed(ROUND_TRIP_DATA)
    assert list(back.data) == list(ROUND_TRIP_DATA)  # the order of the fields
    (row,) = await store.submissions.outbox()
    assert row.event.payload == event_for(sub).payload


async def test_submissions_without_optional_values_round_trip(store: Store) -> None:
    await seed(store)
    bare = Submission(
        submission_id=submission(1).submission_id,
        form_id="frm_1",
        workspace_id="ws_1",
        status=UNVERIFIED,
        data={},
        created_at=submission(1).created_at,
    )
    await store.submissions.commit(plan(bare))

    assert await store.submissions.get(bare.submission_id) == bare


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 1, 15, 12, 0, 0, 123456, tzinfo=UTC),
        datetime(2026, 1, 15, 12, 0, 0, 0, tzinfo=UTC),
        datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(1999, 1, 1, tzinfo=UTC),
    ],
)
async def test_times_round_trip_exactly(store: Store, moment: datetime) -> None:
    await seed(store)
    sub = submission(1, created_at=moment)
    await store.submissions.commit(plan(sub))

    back = await store.submissions.get(sub.submission_id)
    (row,) = await store.submissions.outbox()

    assert back is not None
    assert back.created_at == moment
    assert back.created_at.utcoffset() is not None
    assert back.created_at.microsecond == moment.microsecond
    assert row.event.created_at == moment


def _typed(value: object) -> object:
    """The value with every leaf paired with its type."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    if isinstance(value, float):
        return (float, value.hex())  # tells -0.0 from 0.0
    return (type(value), value)
