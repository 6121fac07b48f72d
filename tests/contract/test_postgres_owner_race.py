"""On PostgreSQL, two owners demoting (or removing) each other from two connections at
once leave one owner: the second change waits for the first on the workspace's row
and then sees it. Without that lock both statements would see the other owner still
there, under READ COMMITTED, and both would pass."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import psycopg
import pytest

from intake.adapters import user_statements as sql
from intake.adapters.postgres import PostgresStore
from intake.adapters.sql_statements import for_psycopg
from intake.domain.users import Role
from tests.contract.builders import workspace
from tests.contract.conftest import PostgresBackend
from tests.contract.test_users import membership, user

pytestmark = [pytest.mark.anyio, pytest.mark.services]


@pytest.fixture
async def store(postgres_url: str) -> AsyncIterator[PostgresStore]:
    opened = await PostgresBackend(postgres_url).open_postgres()
    try:
        await opened.workspaces.add(workspace("ws_1"))
        await opened.users.add(user("usr_1", "ada@example.com"), membership("usr_1"))
        await opened.users.add(user("usr_2", "bo@example.com"), membership("usr_2"))
        yield opened
    finally:
        await opened.close()


@pytest.mark.parametrize("step", ["demote", "remove"])
async def test_the_second_of_two_owners_changed_at_once_stays_owner(
    store: PostgresStore, postgres_url: str, step: str
) -> None:
    first = {"user_id": "usr_1", "workspace_id": "ws_1", "role": Role.MEMBER.value}
    statement = for_psycopg(sql.SET_ROLE if step == "demote" else sql.DELETE_MEMBERSHIP)
    async with await psycopg.AsyncConnection.connect(postgres_url) as other:
        # Another worker's change of the first owner, not committed yet.
        await other.execute(for_psycopg(sql.LOCK_WORKSPACE), first)
        assert (await other.execute(statement, first)).rowcount == 1

        if step == "demote":
            second = asyncio.create_task(store.users.set_role("usr_2", "ws_1", Role.MEMBER))
        else:
            second = asyncio.create_task(store.users.remove_membership("usr_2", "ws_1"))
        await asyncio.sleep(0.3)
        assert not second.done(), "the second change did not wait for the first"
        await other.commit()

    assert await asyncio.wait_for(second, 5) is False
    owners = [m for m in await store.users.workspace_memberships("ws_1") if m.role is Role.OWNER]
    assert [m.user_id for m in owners] == ["usr_2"]
