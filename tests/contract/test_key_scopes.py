"""API key scopes: every store keeps what a key may do, and a key stored before scopes
existed reads back as submit-only (SQLite and PostgreSQL migrated across the change)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from itertools import combinations
from pathlib import Path

import psycopg
import pytest
from attrs import evolve

from intake.adapters.postgres import mapping as pg_mapping
from intake.adapters.postgres import open_postgres_store
from intake.adapters.sqlite import open_sqlite_store
from intake.adapters.sqlite.mapping import ROW_MAPPER as LITE_ROW_MAPPER
from intake.domain.model import SUBMIT_ONLY, ApiKey, Scope
from intake.ports.store import Store
from tests.contract.builders import T0, WORKSPACE_ID, api_key, workspace
from tests.contract.old_schemas import (
    postgres_before,
    postgres_workspace,
    sqlite_before,
    sqlite_workspace,
)
from tests.contract.test_postgres import empty_url  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio

SQLITE_NAME = "0007_key_scopes"  # the migration under test
PG_NAME = "0009_key_scopes"

# Every non-empty set of scopes a key may hold.
EVERY_SET = [frozenset(chosen) for size in (1, 2, 3) for chosen in combinations(list(Scope), size)]

# The columns api_keys had before scopes, as a server of that version wrote them.
OLD_KEY_COLUMNS = "key_id, workspace_id, key_hash, prefix, created_at, revoked_at"


def scoped(number: int, scopes: frozenset[Scope]) -> ApiKey:
    return evolve(api_key(f"key_{number}", WORKSPACE_ID, T0), scopes=scopes)


async def test_a_key_without_scopes_given_only_submits(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.api_keys.add(api_key())

    found = await store.api_keys.get("key_1")

    assert found is not None
    assert found.scopes == SUBMIT_ONLY


async def test_every_set_of_scopes_is_read_back_as_stored(store: Store) -> None:
    await store.workspaces.add(workspace())
    keys = [scoped(number, scopes) for number, scopes in enumerate(EVERY_SET)]
    for key in keys:
        await store.api_keys.add(key)

    for key in keys:
        assert await store.api_keys.get(key.key_id) == key
        found = await store.api_keys.find_by_hash(key.key_hash)
        assert found is not None
        assert found.scopes == key.scopes
    listed = await store.api_keys.list(WORKSPACE_ID)
    assert {k.key_id: k.scopes for k in listed} == {k.key_id: k.scopes for k in keys}


async def test_revoking_a_key_keeps_its_scopes(store: Store) -> None:
    await store.workspaces.add(workspace())
    key = scoped(1, frozenset({Scope.READ, Scope.MANAGE}))
    await store.api_keys.add(key)

    await store.api_keys.revoke(key.key_id, T0)

    assert await store.api_keys.get(key.key_id) == evolve(key, revoked_at=T0)


def old_key() -> ApiKey:
    return api_key("key_old", WORKSPACE_ID, T0)


async def test_a_sqlite_key_of_the_version_before_reads_as_submit_only(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        sqlite_before(conn, SQLITE_NAME)
        sqlite_workspace(conn, WORKSPACE_ID)
        conn.execute(
            f"INSERT INTO api_keys ({OLD_KEY_COLUMNS}) VALUES"
            " (:key_id, :workspace_id, :key_hash, :prefix, :created_at, :revoked_at)",
            LITE_ROW_MAPPER.api_key_params(old_key()),
        )

    store = await open_sqlite_store(f"sqlite:///{path}")
    try:
        assert "0007_key_scopes" in await store.migrate()
        assert await store.api_keys.get("key_old") == old_key()
        found = await store.api_keys.find_by_hash(old_key().key_hash)
        assert found is not None
        assert found.scopes == SUBMIT_ONLY
    finally:
        await store.close()


@pytest.mark.services
async def test_a_postgres_key_of_the_version_before_reads_as_submit_only(
    empty_url: str,  # noqa: F811
) -> None:
    async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
        await postgres_before(conn, PG_NAME)
        await postgres_workspace(conn, WORKSPACE_ID)
        await conn.execute(
            f"INSERT INTO api_keys ({OLD_KEY_COLUMNS}) VALUES (%(key_id)s, %(workspace_id)s,"
            " %(key_hash)s, %(prefix)s, %(created_at)s, %(revoked_at)s)",
            pg_mapping.ROW_MAPPER.api_key_params(old_key()),
        )
    store = await open_postgres_store(empty_url)
    try:
        assert "0009_key_scopes" in await store.migrate()
        assert await store.api_keys.get("key_old") == old_key()
        found = await store.api_keys.find_by_hash(old_key().key_hash)
        assert found is not None
        assert found.scopes == SUBMIT_ONLY
    finally:
        await store.close()
