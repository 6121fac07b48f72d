"""Commits made at the same time through one store: the SQL stores send them together
(one statement or transaction for the lot), and each still gets its own answer, exactly
as if they had come one after another."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from attrs import evolve

from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import RETENTION
from intake.domain.model import Submission
from intake.ports.store import Store
from intake.ports.submissions import (
    CommitPlan,
    Committed,
    IdempotencyTaken,
    QuotaReached,
)
from tests.contract.builders import (
    PERIOD,
    T0,
    WORKSPACE_ID,
    event_for,
    form,
    plan,
    quota,
    record,
    seed,
    stored,
    submission,
)
from tests.contract.conftest import Backend

# Of the pipeline's ports: the in-memory pipeline is held to the SQL stores here too.
PIPELINE_PORTS = True

pytestmark = pytest.mark.anyio

OTHER_FORM = form("frm_b", "ws_b", "pk0b")


async def _commit_together(store: Store, plans: list[CommitPlan]) -> list[object]:
    return list(
        await asyncio.gather(
            *(store.submissions.commit(each) for each in plans), return_exceptions=True
        )
    )


async def test_commits_made_together_each_get_their_own_answer(store: Store) -> None:
    await seed(store, form(), OTHER_FORM)
    near = [submission(n) for n in range(1, 6)]  # a ceiling of 3
    far = [submission(n, form_id="frm_b", workspace_id="ws_b") for n in range(6, 10)]
    plans = [plan(sub, charge=quota(3)) for sub in near]
    plans += [plan(sub, charge=quota(1000, "ws_b")) for sub in far]
    # Interleaved, as requests of two workspaces arrive.
    order = [0, 5, 1, 6, 2, 7, 3, 8, 4]
    plans = [plans[i] for i in order]

    results = await _commit_together(store, plans)

    expected = {
        near[0].submission_id: Committed(),
        near[1].submission_id: Committed(),
        near[2].submission_id: Committed(),
        near[3].submission_id: QuotaReached(),
        near[4].submission_id: QuotaReached(),
    } | {sub.submission_id: Committed() for sub in far}
    assert results == [expected[each.submission.submission_id] for each in plans]
    assert await stored(store) == near[:3]
    assert await stored(store, "frm_b") == far
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 3
    assert await store.workspaces.usage("ws_b", PERIOD) == 4


async def test_commits_made_together_keep_every_value_exactly(store: Store) -> None:
    await seed(store)
    awkward: list[Submission] = [
        evolve(
            submission(n, files=n % 3),
            data={"z": -0.0, "a": 1e300, "big": 2**70, "text": 'é ✓ \\u0000 "q"', "n": n},
            spam_score=0.1 + 0.2 * n,
            created_at=T0 + timedelta(microseconds=n),
        )
        for n in range(1, 6)
    ]

    results = await _commit_together(store, [plan(sub, charge=quota(100)) for sub in awkward])

    assert results == [Committed()] * 5
    assert await stored(store) == awkward
    assert [row.event for row in await store.submissions.outbox()] == [
        event_for(sub) for sub in awkward
    ]


async def test_one_key_twice_in_one_batch_commits_the_first_only(store: Store) -> None:
    await seed(store)
    first, second, third = submission(1), submission(2), submission(3)
    plans = [
        plan(first, idempotency=record(first), charge=quota(100)),
        plan(second, idempotency=record(second), charge=quota(100)),
        plan(third, idempotency=record(third, key="key-2"), charge=quota(100)),
    ]

    results = await _commit_together(store, plans)

    assert results == [Committed(), IdempotencyTaken(record(first)), Committed()]
    assert await stored(store) == [first, third]
    assert [row.event for row in await store.submissions.outbox()] == [
        event_for(first),
        event_for(third),
    ]
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 2


async def test_many_commits_of_one_workspace_together_count_exactly(store: Store) -> None:
    # More than a transaction of the PostgreSQL store takes of one workspace.
    await seed(store)
    subs = [submission(n) for n in range(1, 41)]

    results = await _commit_together(store, [plan(sub, charge=quota(1000)) for sub in subs])

    assert results == [Committed()] * 40
    assert await stored(store) == subs
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 40


async def test_a_batch_that_fails_leaves_nothing(store: Store, backend: Backend) -> None:
    await seed(store, form(), OTHER_FORM)
    subs = [submission(n) for n in range(1, 5)]
    subs.append(submission(5, form_id="frm_b", workspace_id="ws_b"))
    plans = [
        plan(sub, idempotency=record(sub, key=f"key-{sub.submission_id}"), charge=quota(10))
        for sub in subs[:4]
    ]
    plans.append(plan(subs[4], charge=quota(10, "ws_b")))

    async with backend.failing_commits():
        results = await _commit_together(store, plans)

    assert all(isinstance(result, StorageUnavailable) for result in results)
    assert await stored(store) == []
    assert await stored(store, "frm_b") == []
    assert await store.submissions.outbox() == []
    for sub in subs[:4]:
        key = record(sub, key=f"key-{sub.submission_id}")
        not_before = sub.created_at - RETENTION
        assert await store.submissions.find_idempotency(key.scope, key.key, not_before) is None
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0
    assert await store.workspaces.usage("ws_b", PERIOD) == 0
    # Nothing was half-kept: the same commits go through as if first.
    assert await _commit_together(store, plans) == [Committed()] * 5
