"""The PostgreSQL store keeps step 1's lookups until any process changes a form or a
workspace: the tables' triggers notify, and the store empties its cache. Store `store`
keeps lookups for a minute, so that within a test only a notification can explain a
change it sees; `other` is another pool on the same database, as another process."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import psycopg
import pytest
from attrs import evolve
from psycopg.rows import dict_row

from intake.adapters.postgres import PostgresStore, open_postgres_store
from intake.adapters.postgres.form_changes_listener import APPLICATION_NAME, FormChangesListener
from intake.domain.model import (
    Challenge,
    ChallengeProvider,
    FieldRule,
    Form,
    FormMode,
    RuleKind,
    Workspace,
)
from intake.ports.forms import FormContext
from tests.contract.builders import FORM_ID, seed, workspace
from tests.contract.builders import form as built_form
from tests.contract.conftest import PostgresBackend

pytestmark = [pytest.mark.anyio, pytest.mark.services]

KEY = "pk0form1"
TTL = 60.0
NOTICE = 0.5  # seconds a notification may take to reach the other store
UNREACHABLE = "postgresql://postgres@127.0.0.1:1/intake"


def open_form() -> Form:
    return evolve(built_form(public_form_key=KEY), mode=FormMode.PUBLIC, enabled=True)


@pytest.fixture
def backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def other(backend: PostgresBackend) -> AsyncIterator[PostgresStore]:
    """Another process's store; its first open empties the tables. It seeds the form."""
    opened = await backend.open_postgres()
    try:
        await seed(opened, open_form())
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def store(backend: PostgresBackend, other: PostgresStore) -> AsyncIterator[PostgresStore]:
    opened = await open_postgres_store(backend.url, form_cache_ttl=TTL)
    try:
        yield opened
    finally:
        await opened.close()


async def unannounced(backend: PostgresBackend, name: str) -> None:
    """Renames the form without firing the triggers: a change the store cannot hear of,
    so it sees it only when it asks the database."""
    await backend.execute(
        "SET session_replication_role = replica;"
        f" UPDATE forms SET name = '{name}'; RESET session_replication_role"
    )


async def serves_from_cache(store: PostgresStore, backend: PostgresBackend) -> bool:
    before = await store.forms.resolve_public_key(KEY)
    assert before is not None
    await unannounced(backend, f"probe {time.monotonic_ns()}")
    return await store.forms.resolve_public_key(KEY) == before


async def caching(store: PostgresStore, backend: PostgresBackend) -> None:
    """Once the store listens (it starts on its first lookup), lookups are kept."""
    deadline = time.monotonic() + 10
    while not await serves_from_cache(store, backend):
        assert time.monotonic() < deadline, "the store never kept a lookup"
        await asyncio.sleep(0.05)


async def seen_within(store: PostgresStore, expected: FormContext, seconds: float) -> float:
    started = time.monotonic()
    while (found := await store.forms.resolve_public_key(KEY)) != expected:
        assert time.monotonic() - started < seconds, found
        await asyncio.sleep(0.005)
    return time.monotonic() - started


async def listeners(url: str, expected: int) -> int:
    """The form listeners' connections, once `expected` or after a second (a closed
    connection leaves the server's list a moment after)."""
    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, row_factory=dict_row
    ) as conn:
        count = -1
        for _ in range(50):
            cursor = await conn.execute(
                "SELECT count(*) AS n FROM pg_stat_activity"
                " WHERE application_name = %s AND datname = current_database()",
                (APPLICATION_NAME,),
            )
            row = await cursor.fetchone()
            assert row is not None
            count = int(row["n"])
            if count == expected:
                break
            await asyncio.sleep(0.02)
        return count


FormChange = Callable[[Form], Form]
FORM_CHANGES: dict[str, FormChange] = {
    "allowed origins": lambda f: evolve(f, allowed_origins=("https://elsewhere.example",)),
    "challenge": lambda f: evolve(f, challenge=Challenge(ChallengeProvider.HCAPTCHA, "s2")),
    "no challenge": lambda f: evolve(f, challenge=None),
    "rules": lambda f: evolve(f, rules=(FieldRule("phone", RuleKind.REQUIRED),)),
    "redirect url": lambda f: evolve(f, redirect_url="https://example.com/merci"),
    "spam threshold": lambda f: evolve(f, spam_threshold=9.5),
}


@pytest.mark.parametrize("change", FORM_CHANGES.values(), ids=FORM_CHANGES.keys())
async def test_a_form_changed_by_another_process_is_seen_by_the_next_lookup(
    store: PostgresStore, other: PostgresStore, backend: PostgresBackend, change: FormChange
) -> None:
    await caching(store, backend)
    changed = change(open_form())

    await other.forms.update(changed)

    took = await seen_within(store, FormContext(changed, workspace()), NOTICE)
    assert took < NOTICE


async def test_a_workspace_changed_by_another_process_is_seen_by_the_next_lookup(
    store: PostgresStore, other: PostgresStore, backend: PostgresBackend
) -> None:
    await caching(store, backend)
    current = await other.forms.get(FORM_ID)  # renamed by caching()
    assert current is not None
    changed: Workspace = evolve(workspace(), monthly_limit=5)

    await other.workspaces.update(changed)

    took = await seen_within(store, FormContext(current, changed), NOTICE)
    assert took < NOTICE


async def test_while_the_listener_is_down_nothing_is_kept_then_lookups_are_kept_again(
    store: PostgresStore, backend: PostgresBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    await caching(store, backend)
    assert await listeners(backend.url, expected=1) == 1
    forms_listener = store._forms_listener
    assert isinstance(forms_listener, FormChangesListener)
    # Its next connections fail, until the end of the test's first half.
    with monkeypatch.context() as patched:
        patched.setattr(forms_listener._listener, "_conninfo", UNREACHABLE)
        await backend.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            f" WHERE application_name = '{APPLICATION_NAME}' AND datname = current_database()"
        )
        assert await listeners(backend.url, expected=0) == 0

        # Once the loss is noticed, every lookup asks the database.
        deadline = time.monotonic() + 5
        while await serves_from_cache(store, backend):
            assert time.monotonic() < deadline, "the cache still serves without its listener"
            await asyncio.sleep(0.02)
        for _ in range(3):
            assert not await serves_from_cache(store, backend)

    # Listening again (the next attempt is within a second), it keeps lookups again.
    await caching(store, backend)
    assert await listeners(backend.url, expected=1) == 1


async def test_a_store_listens_once_it_looks_up_and_stops_when_closed(
    backend: PostgresBackend, other: PostgresStore
) -> None:
    store = await open_postgres_store(backend.url, form_cache_ttl=TTL)
    try:
        # `other` never looks a form up, so it does not listen.
        assert await listeners(backend.url, expected=0) == 0
        await caching(store, backend)
        assert await listeners(backend.url, expected=1) == 1
    finally:
        await store.close()
    assert await listeners(backend.url, expected=0) == 0
