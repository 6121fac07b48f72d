"""The commit: submission, outbox row, idempotency record and quota count, all of it or
none of it (decisions.md, "Quota", "Idempotency", "Commit and events")."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from attrs import evolve

from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import RETENTION
from intake.domain.model import SubmissionStatus
from intake.ports.store import Store
from intake.ports.submissions import (
    CommitResult,
    Committed,
    IdempotencyTaken,
    OutboxRow,
    QuotaReached,
)
from tests.contract.builders import (
    PERIOD,
    WORKSPACE_ID,
    event_for,
    form,
    plan,
    quota,
    record,
    seed,
    stored,
    submission,
    workspace,
)
from tests.contract.conftest import Backend

# Of the pipeline's ports: the in-memory pipeline is held to the SQL stores here too.
PIPELINE_PORTS = True

pytestmark = pytest.mark.anyio


async def test_a_commit_writes_submission_outbox_row_idempotency_record_and_usage(
    store: Store,
) -> None:
    await seed(store)
    sub = submission(1)
    key = record(sub)

    result = await store.submissions.commit(plan(sub, idempotency=key, charge=quota(10)))

    assert result == Committed()
    assert await store.submissions.get(sub.submission_id) == sub
    assert await store.submissions.outbox() == [OutboxRow(event_for(sub))]
    not_before = sub.created_at - RETENTION
    assert await store.submissions.find_idempotency(key.scope, key.key, not_before) == key
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 1


async def test_a_commit_without_a_key_leaves_no_idempotency_record(store: Store) -> None:
    await seed(store)
    sub = submission(1)

    assert await store.submissions.commit(plan(sub, charge=quota(10))) == Committed()

    found = await store.submissions.find_idempotency(
        record(sub).scope, record(sub).key, sub.created_at - RETENTION
    )
    assert found is None
    assert await stored(store) == [sub]


# Quota


async def test_plans_without_a_quota_charge_do_not_count(store: Store) -> None:
    await seed(store)
    spam = submission(1, status=SubmissionStatus.SPAM)
    unverified = submission(2, status=SubmissionStatus.UNVERIFIED)

    for sub in (spam, unverified):
        assert await store.submissions.commit(plan(sub)) == Committed()

    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0
    assert await stored(store) == [spam, unverified]


async def test_plans_without_a_quota_charge_commit_past_the_ceiling(store: Store) -> None:
    await seed(store)
    await store.submissions.commit(plan(submission(1), charge=quota(1)))
    spam = submission(2, status=SubmissionStatus.SPAM)

    assert await store.submissions.commit(plan(spam)) == Committed()
    assert await store.submissions.get(spam.submission_id) == spam
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 1


async def test_a_commit_at_the_ceiling_is_refused_and_stores_nothing(store: Store) -> None:
    await seed(store)
    for n in (1, 2):
        assert await store.submissions.commit(plan(submission(n), charge=quota(2))) == Committed()
    over = submission(3)
    key = record(over, "key-3")

    result = await store.submissions.commit(plan(over, idempotency=key, charge=quota(2)))

    assert result == QuotaReached()
    assert await store.submissions.get(over.submission_id) is None
    assert [row.event.submission_id for row in await store.submissions.outbox()] == [
        submission(1).submission_id,
        submission(2).submission_id,
    ]
    not_before = over.created_at - RETENTION
    assert await store.submissions.find_idempotency(key.scope, key.key, not_before) is None
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 2


async def test_a_zero_ceiling_refuses_the_first_submission(store: Store) -> None:
    await seed(store)

    result = await store.submissions.commit(plan(submission(1), charge=quota(0)))

    assert result == QuotaReached()
    assert await stored(store) == []
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0


async def test_a_raised_ceiling_admits_more_in_the_same_month(store: Store) -> None:
    await seed(store)
    await store.submissions.commit(plan(submission(1), charge=quota(1)))
    assert await store.submissions.commit(plan(submission(2), charge=quota(1))) == QuotaReached()

    assert await store.submissions.commit(plan(submission(3), charge=quota(2))) == Committed()
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 2


async def test_concurrent_commits_against_the_ceiling_commit_exactly_the_remaining(
    store: Store,
) -> None:
    await seed(store)
    subs = [submission(n) for n in range(10)]

    results = await asyncio.gather(
        *(store.submissions.commit(plan(sub, charge=quota(4))) for sub in subs)
    )

    assert sorted(type(r).__name__ for r in results) == ["Committed"] * 4 + ["QuotaReached"] * 6
    committed = [sub for sub, r in zip(subs, results, strict=True) if r == Committed()]
    refused = [sub for sub, r in zip(subs, results, strict=True) if r == QuotaReached()]
    assert await stored(store) == committed
    assert [row.event for row in await store.submissions.outbox()] == [
        event_for(sub) for sub in committed
    ]
    for sub in refused:
        assert await store.submissions.get(sub.submission_id) is None
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 4


async def test_quota_is_counted_per_workspace_and_per_month(store: Store) -> None:
    await seed(store, form(), form("frm_b", "ws_b", "pk0b"))

    await store.submissions.commit(plan(submission(1), charge=quota(1)))
    other_workspace = submission(2, form_id="frm_b", workspace_id="ws_b")
    next_month = submission(3)

    assert (
        await store.submissions.commit(plan(other_workspace, charge=quota(1, "ws_b")))
        == Committed()
    )
    assert (
        await store.submissions.commit(plan(next_month, charge=quota(1, period="2026-02")))
        == Committed()
    )
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 1
    assert await store.workspaces.usage(WORKSPACE_ID, "2026-02") == 1
    assert await store.workspaces.usage("ws_b", PERIOD) == 1


# Idempotency


async def test_a_second_commit_with_the_same_key_gets_the_first_record_and_stores_nothing(
    store: Store,
) -> None:
    await seed(store)
    first, second = submission(1), submission(2)
    await store.submissions.commit(plan(first, idempotency=record(first), charge=quota(10)))

    result = await store.submissions.commit(
        plan(second, idempotency=record(second), charge=quota(10))
    )

    assert result == IdempotencyTaken(record(first))
    assert await stored(store) == [first]
    assert len(await store.submissions.outbox()) == 1
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 1


async def test_a_taken_key_is_answered_even_when_the_quota_is_spent(store: Store) -> None:
    await seed(store)
    first, retry = submission(1), submission(2)
    await store.submissions.commit(plan(first, idempotency=record(first), charge=quota(1)))

    result = await store.submissions.commit(plan(retry, idempotency=record(retry), charge=quota(1)))

    assert result == IdempotencyTaken(record(first))


async def test_the_same_key_in_another_scope_is_another_key(store: Store) -> None:
    await seed(store)
    first, second = submission(1), submission(2)
    await store.submissions.commit(plan(first, idempotency=record(first)))

    result = await store.submissions.commit(
        plan(second, idempotency=record(second, scope="server:frm_1"))
    )

    assert result == Committed()
    assert await stored(store) == [first, second]


async def test_concurrent_commits_with_one_key_commit_exactly_one(store: Store) -> None:
    await seed(store)
    subs = [submission(n) for n in range(10)]

    results: list[CommitResult] = await asyncio.gather(
        *(
            store.submissions.commit(plan(sub, idempotency=record(sub), charge=quota(100)))
            for sub in subs
        )
    )

    winners = [sub for sub, r in zip(subs, results, strict=True) if r == Committed()]
    assert len(winners) == 1
    taken = [r for r in results if r != Committed()]
    assert taken == [IdempotencyTaken(record(winners[0]))] * 9
    assert await stored(store) == winners
    assert len(await store.submissions.outbox()) == 1
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 1


async def test_an_expired_record_is_replaced(store: Store) -> None:
    await seed(store)
    first = submission(1)
    later = submission(2, created_at=first.created_at + RETENTION)
    await store.submissions.commit(plan(first, idempotency=record(first)))

    result = await store.submissions.commit(plan(later, idempotency=record(later)))

    assert result == Committed()
    assert await stored(store) == [first, later]
    found = await store.submissions.find_idempotency(
        record(later).scope, record(later).key, later.created_at - RETENTION
    )
    assert found == record(later)


async def test_a_record_short_of_expiry_by_a_microsecond_still_holds_the_key(
    store: Store,
) -> None:
    await seed(store)
    first = submission(1)
    almost = submission(2, created_at=first.created_at + RETENTION - timedelta(microseconds=1))
    await store.submissions.commit(plan(first, idempotency=record(first)))

    result = await store.submissions.commit(plan(almost, idempotency=record(almost)))

    assert result == IdempotencyTaken(record(first))


async def test_find_idempotency_returns_only_records_newer_than_not_before(
    store: Store,
) -> None:
    await seed(store)
    sub = submission(1)
    key = record(sub)
    await store.submissions.commit(plan(sub, idempotency=key))
    find = store.submissions.find_idempotency
    tick = timedelta(microseconds=1)

    assert await find(key.scope, key.key, sub.created_at - tick) == key
    assert await find(key.scope, key.key, sub.created_at) is None
    assert await find(key.scope, key.key, sub.created_at + tick) is None
    assert await find(key.scope, "key-other", sub.created_at - tick) is None
    assert await find("server:frm_1", key.key, sub.created_at - tick) is None


# Failure


async def test_a_failed_commit_raises_storage_unavailable_and_leaves_nothing(
    store: Store, backend: Backend
) -> None:
    await seed(store)
    sub = submission(1)
    failing = plan(sub, idempotency=record(sub), charge=quota(10))

    async with backend.failing_commits():
        with pytest.raises(StorageUnavailable):
            await store.submissions.commit(failing)

    assert await store.submissions.get(sub.submission_id) is None
    assert await store.submissions.outbox() == []
    assert (
        await store.submissions.find_idempotency(
            record(sub).scope, record(sub).key, sub.created_at - RETENTION
        )
        is None
    )
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0
    # Nothing was half-kept, so the retry goes through as if first.
    assert await store.submissions.commit(failing) == Committed()
    assert await stored(store) == [sub]


async def test_a_failed_commit_leaves_the_workspace_usable(store: Store, backend: Backend) -> None:
    await seed(store)
    async with backend.failing_commits():
        with pytest.raises(StorageUnavailable):
            await store.submissions.commit(plan(submission(1), charge=quota(10)))

    await store.workspaces.update(evolve(workspace(), name="Renamed"))

    renamed = await store.workspaces.get(WORKSPACE_ID)
    assert renamed is not None
    assert renamed.name == "Renamed"
