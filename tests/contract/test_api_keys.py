from __future__ import annotations

from datetime import timedelta

import pytest
from attrs import evolve

from intake.ports.store import Store
from tests.contract.builders import T0, WORKSPACE_ID, api_key, workspace

# Of the pipeline's ports: the in-memory pipeline is held to the SQL stores here too.
PIPELINE_PORTS = True

pytestmark = pytest.mark.anyio


async def test_an_added_key_is_found_by_its_hash_and_by_its_id(store: Store) -> None:
    await store.workspaces.add(workspace())
    key = api_key()

    await store.api_keys.add(key)

    assert await store.api_keys.find_by_hash(key.key_hash) == key
    assert await store.api_keys.get(key.key_id) == key


async def test_an_unknown_hash_or_id_finds_nothing(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.api_keys.add(api_key())

    assert await store.api_keys.find_by_hash(b"\0" * 32) is None
    assert await store.api_keys.get("key_missing") is None


async def test_revoking_a_key_records_when(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.api_keys.add(api_key())
    when = T0 + timedelta(days=3, microseconds=17)

    assert await store.api_keys.revoke("key_1", when) is True

    revoked = await store.api_keys.get("key_1")
    assert revoked is not None
    assert revoked == evolve(api_key(), revoked_at=when)
    assert revoked.revoked
    assert await store.api_keys.find_by_hash(api_key().key_hash) == revoked


async def test_revoking_twice_keeps_the_first_time(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.api_keys.add(api_key())
    first = T0 + timedelta(days=1)

    await store.api_keys.revoke("key_1", first)
    again = await store.api_keys.revoke("key_1", first + timedelta(days=1))

    assert again is True
    key = await store.api_keys.get("key_1")
    assert key is not None
    assert key.revoked_at == first


async def test_revoking_an_unknown_key_returns_false(store: Store) -> None:
    assert await store.api_keys.revoke("key_missing", T0) is False


async def test_keys_are_listed_per_workspace_oldest_first(store: Store) -> None:
    await store.workspaces.add(workspace("ws_a"))
    await store.workspaces.add(workspace("ws_b"))
    newest = api_key("key_a", "ws_a", T0 + timedelta(hours=2))
    oldest = api_key("key_c", "ws_a", T0)
    same_time_later_id = api_key("key_d", "ws_a", T0)
    elsewhere = api_key("key_b", "ws_b", T0 + timedelta(hours=1))
    for key in (newest, oldest, elsewhere, same_time_later_id):
        await store.api_keys.add(key)

    assert await store.api_keys.list("ws_a") == [oldest, same_time_later_id, newest]
    assert await store.api_keys.list("ws_b") == [elsewhere]
    assert await store.api_keys.list("ws_missing") == []


async def test_a_key_is_listed_with_its_revocation(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.api_keys.add(api_key())
    await store.api_keys.revoke("key_1", T0)

    assert await store.api_keys.list(WORKSPACE_ID) == [evolve(api_key(), revoked_at=T0)]
