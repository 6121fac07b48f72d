"""A key claimed alone, for a honeypot's look-alike success: the key is held exactly as a
committed submission's would be, and nothing else is written."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from intake.domain.idempotency import RETENTION
from intake.ports.store import Store
from intake.ports.submissions import IdempotencyTaken
from tests.contract.builders import (
    PERIOD,
    WORKSPACE_ID,
    plan,
    quota,
    record,
    seed,
    stored,
    submission,
)

# Of the pipeline's ports: the in-memory pipeline is held to the SQL stores here too.
PIPELINE_PORTS = True

pytestmark = pytest.mark.anyio


async def test_a_free_key_is_claimed_and_nothing_else_is_written(store: Store) -> None:
    await seed(store)
    decoy = record(submission(1))

    assert await store.submissions.claim_key(decoy) is None

    found = await store.submissions.find_idempotency(
        decoy.scope, decoy.key, decoy.created_at - RETENTION
    )
    assert found == decoy
    assert await stored(store) == []
    assert await store.submissions.outbox() == []
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0


async def test_a_claimed_key_answers_a_later_claim_with_the_first_record(store: Store) -> None:
    await seed(store)
    first, second = record(submission(1)), record(submission(2))
    await store.submissions.claim_key(first)

    assert await store.submissions.claim_key(second) == first


async def test_a_claimed_key_is_taken_for_a_real_commit_too(store: Store) -> None:
    await seed(store)
    decoy = record(submission(1))
    await store.submissions.claim_key(decoy)
    real = submission(2)

    result = await store.submissions.commit(plan(real, idempotency=record(real), charge=quota(5)))

    assert result == IdempotencyTaken(decoy)
    assert await stored(store) == []
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0


async def test_a_key_held_by_a_committed_submission_cannot_be_claimed(store: Store) -> None:
    await seed(store)
    real = submission(1)
    await store.submissions.commit(plan(real, idempotency=record(real)))

    assert await store.submissions.claim_key(record(submission(2))) == record(real)


async def test_an_expired_record_gives_its_key_to_a_claim(store: Store) -> None:
    await seed(store)
    old = record(submission(1))
    later = submission(2, created_at=old.created_at + RETENTION)
    await store.submissions.claim_key(old)

    assert await store.submissions.claim_key(record(later)) is None
    assert await store.submissions.claim_key(record(submission(3))) == record(later)


async def test_a_record_short_of_expiry_keeps_its_key_from_a_claim(store: Store) -> None:
    await seed(store)
    old = record(submission(1))
    almost = submission(2, created_at=old.created_at + RETENTION - timedelta(microseconds=1))
    await store.submissions.claim_key(old)

    assert await store.submissions.claim_key(record(almost)) == old


async def test_concurrent_claims_of_one_key_leave_exactly_one_holder(store: Store) -> None:
    await seed(store)
    records = [record(submission(n)) for n in range(8)]

    results = await asyncio.gather(*(store.submissions.claim_key(r) for r in records))

    winners = [r for r, result in zip(records, results, strict=True) if result is None]
    assert len(winners) == 1
    assert [result for result in results if result is not None] == [winners[0]] * 7
