"""The store's own operations: migrate, ping and close."""

from __future__ import annotations

import pytest

from intake.domain.errors import StorageUnavailable
from intake.ports.store import Store
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
