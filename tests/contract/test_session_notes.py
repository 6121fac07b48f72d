"""What a dashboard session is shown once (NoteRepository), in every store: kept for the
session, taken once, gone once expired or replaced, and kept sealed by the SQL stores
(no copy of the database holds a new API key), gone with its session."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from datetime import timedelta

import psycopg
import pytest

from intake.ports.store import Store
from tests.contract.builders import T0
from tests.contract.conftest import Backend, PostgresBackend, SqliteBackend
from tests.contract.test_users import membership, session, user, users_store  # noqa: F401

pytestmark = pytest.mark.anyio

NOTE = '{"secret": "ik_live_zq-note-4417"}'
LATER = T0 + timedelta(minutes=10)


async def signed_in(store: Store, *session_ids: str) -> None:
    await store.users.add(user(), membership())
    for session_id in session_ids:
        await store.users.add_session(session(session_id))


async def test_a_note_is_taken_once(users_store: Store) -> None:  # noqa: F811
    await signed_in(users_store, "ses_1", "ses_2")
    await users_store.notes.keep("ses_1", NOTE, now=T0, expires_at=LATER)

    assert await users_store.notes.take("ses_2", T0) is None  # another session's: none
    assert await users_store.notes.take("ses_1", T0) == NOTE
    assert await users_store.notes.take("ses_1", T0) is None


async def test_a_note_replaces_the_one_before_and_expires(users_store: Store) -> None:  # noqa: F811
    await signed_in(users_store, "ses_1", "ses_2")
    await users_store.notes.keep("ses_1", "first", now=T0, expires_at=LATER)
    await users_store.notes.keep("ses_1", "second", now=T0, expires_at=LATER)
    await users_store.notes.keep("ses_2", "late", now=T0, expires_at=LATER)

    assert await users_store.notes.take("ses_1", T0) == "second"
    assert await users_store.notes.take("ses_2", LATER) is None  # expired: never shown


async def test_of_two_takes_at_once_one_has_it(users_store: Store) -> None:  # noqa: F811
    await signed_in(users_store, "ses_1")
    await users_store.notes.keep("ses_1", NOTE, now=T0, expires_at=LATER)

    taken = await asyncio.gather(*(users_store.notes.take("ses_1", T0) for _ in range(4)))

    assert taken.count(NOTE) == 1
    assert taken.count(None) == 3


async def test_a_sql_store_keeps_it_sealed_and_drops_it_with_its_session(
    users_store: Store,  # noqa: F811
    backend: Backend,
) -> None:
    await signed_in(users_store, "ses_1")
    await users_store.notes.keep("ses_1", NOTE, now=T0, expires_at=LATER)

    kept = await stored_notes(backend)
    await users_store.users.end_session("ses_1")

    assert len(kept) == 1
    assert "zq-note-4417" not in kept[0]
    assert kept[0].startswith("sealed:")
    assert await stored_notes(backend) == []


async def stored_notes(backend: Backend) -> list[str]:
    if isinstance(backend, SqliteBackend):
        with closing(sqlite3.connect(backend.path)) as conn:
            return [row[0] for row in conn.execute("SELECT note FROM session_notes")]
    assert isinstance(backend, PostgresBackend)
    async with await psycopg.AsyncConnection.connect(backend.url, autocommit=True) as conn:
        cursor = await conn.execute("SELECT note FROM session_notes")
        return [row[0] for row in await cursor.fetchall()]
