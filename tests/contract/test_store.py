"""The store's own operations (migrate, ping, close), and how every store keeps time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from attrs import evolve

from intake.domain.errors import StorageUnavailable
from intake.ports.store import Store
from tests.contract.builders import plan, seed, stored, submission
from tests.contract.conftest import Backend

pytestmark = pytest.mark.anyio


async def test_a_current_store_has_no_migration_to_apply(store: Store) -> None:
    # The first call may report what opening applied (SQLite migrates on open).
    await store.migrate()

    assert await store.migrate() == []
    assert await store.migrate() == []


async def test_an_open_store_answers_a_ping(store: Store) -> None:
    await store.ping()


async def test_a_closed_store_fails_its_ping(backend: Backend) -> None:
    store = await backend.open()
    await store.close()

    with pytest.raises(StorageUnavailable):
        await store.ping()


async def test_closing_twice_is_harmless(backend: Backend) -> None:
    store = await backend.open()

    await store.close()
    await store.close()


async def test_operations_on_a_closed_store_raise_storage_unavailable(backend: Backend) -> None:
    opened = await backend.open()
    await opened.close()

    with pytest.raises(StorageUnavailable):
        await opened.workspaces.list()
    with pytest.raises(StorageUnavailable):
        await opened.submissions.commit(plan(submission(1)))


# Times: every store keeps the moment and gives it back in UTC, and guesses no zone.


async def test_times_in_any_zone_come_back_as_the_same_moment_in_utc(store: Store) -> None:
    await seed(store)
    local = datetime(2026, 1, 15, 14, 30, 0, 654321, tzinfo=timezone(timedelta(hours=2)))
    sub = submission(1, created_at=local)
    await store.submissions.commit(plan(sub))

    back = await store.submissions.get(sub.submission_id)

    assert back is not None
    assert back.created_at == local
    assert back.created_at.tzinfo is UTC
    assert back.created_at == datetime(2026, 1, 15, 12, 30, 0, 654321, tzinfo=UTC)


async def test_a_naive_time_is_refused_rather_than_guessed(store: Store) -> None:
    await seed(store)
    naive = evolve(submission(1), created_at=datetime(2026, 1, 15, 12, 0))

    with pytest.raises(ValueError, match="timezone-aware"):
        await store.submissions.commit(plan(naive))
    assert await stored(store) == []
