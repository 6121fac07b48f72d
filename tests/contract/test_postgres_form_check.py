"""The PostgreSQL store's commit checks the form again in its transaction: a form
changed by another process since it was looked up (the `intake` command, another
worker) stores nothing it no longer accepts, whatever the lookup answered (kept
lookups and their invalidation: test_postgres_form_cache.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from attrs import evolve

from intake.adapters.postgres import PostgresStore, mapping, open_postgres_store
from intake.adapters.postgres import submissions as pg
from intake.domain.errors import ErrorCode
from intake.domain.model import Form, FormMode
from intake.ports.submissions import CommitPlan, Committed, FormCheck, FormRefused
from tests.contract.builders import (
    FORM_ID,
    PERIOD,
    WORKSPACE_ID,
    form,
    plan,
    quota,
    seed,
    stored,
    submission,
    workspace,
)
from tests.contract.conftest import PostgresBackend

pytestmark = [pytest.mark.anyio, pytest.mark.services]

KEY = "pk0form1"
AN_HOUR = 3600.0


def open_form() -> Form:
    return evolve(form(public_form_key=KEY), mode=FormMode.PUBLIC, enabled=True)


@pytest.fixture
def backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def store(backend: PostgresBackend) -> AsyncIterator[PostgresStore]:
    """The store under test, its lookups kept for long; the first open empties the
    tables, and the form is seeded."""
    seeding = await backend.open_postgres()
    try:
        await seed(seeding, open_form())
    finally:
        await seeding.close()
    opened = await open_postgres_store(backend.url, form_cache_ttl=AN_HOUR)
    try:
        yield opened
    finally:
        await opened.close()


def checked(n: int, public_form_key: str | None = KEY) -> CommitPlan:
    return evolve(plan(submission(n), charge=quota(10)), check=FormCheck(FORM_ID, public_form_key))


async def nothing_stored(store: PostgresStore) -> None:
    assert await stored(store) == []
    assert await store.submissions.outbox() == []
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ("UPDATE forms SET enabled = false", ErrorCode.FORM_DISABLED),
        ("UPDATE workspaces SET active = false", ErrorCode.FORM_DISABLED),
        ("UPDATE forms SET public_form_key = 'pk0rotated'", ErrorCode.FORM_NOT_FOUND),
        ("UPDATE forms SET mode = 'protected'", ErrorCode.UNAUTHORIZED),
    ],
)
async def test_a_form_changed_by_another_process_since_its_lookup_stores_nothing(
    store: PostgresStore, backend: PostgresBackend, change: str, refusal: ErrorCode
) -> None:
    before = await store.forms.resolve_public_key(KEY)
    assert before is not None
    await backend.execute(change)

    # The request looked the form up before the change; the commit reads the rows as
    # they are now.
    assert await store.submissions.commit(checked(1)) == FormRefused(refusal)
    await nothing_stored(store)


async def test_the_server_route_checks_that_the_form_accepts_not_its_key_or_mode(
    store: PostgresStore, backend: PostgresBackend
) -> None:
    await backend.execute("UPDATE forms SET mode = 'protected', public_form_key = 'pk0rotated'")

    assert await store.submissions.commit(checked(1, public_form_key=None)) == Committed()

    await backend.execute("UPDATE forms SET enabled = false")
    assert await store.submissions.commit(checked(2, public_form_key=None)) == FormRefused(
        ErrorCode.FORM_DISABLED
    )
    assert [s.submission_id for s in await stored(store)] == [submission(1).submission_id]


async def test_an_unchanged_form_commits_with_its_check(store: PostgresStore) -> None:
    assert await store.submissions.commit(checked(1)) == Committed()

    assert await stored(store) == [submission(1)]
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 1


async def test_a_change_made_through_the_store_itself_is_seen_at_once(
    store: PostgresStore,
) -> None:
    assert await store.forms.resolve_public_key(KEY) is not None
    await store.forms.update(evolve(open_form(), enabled=False, public_form_key="pk0new"))

    assert await store.forms.resolve_public_key(KEY) is None
    renamed = await store.forms.resolve_public_key("pk0new")
    assert renamed is not None
    assert renamed.form.enabled is False

    await store.workspaces.update(evolve(workspace(), active=False))
    by_id = await store.forms.resolve_id(FORM_ID)
    assert by_id is not None
    assert by_id.workspace.active is False


async def test_a_lookup_is_asked_again_once_its_time_is_up(
    backend: PostgresBackend, store: PostgresStore
) -> None:
    uncached = await open_postgres_store(backend.url, form_cache_ttl=0)
    try:
        assert await uncached.forms.resolve_public_key(KEY) is not None
        await backend.execute("UPDATE forms SET enabled = false")

        again = await uncached.forms.resolve_public_key(KEY)
    finally:
        await uncached.close()
    assert again is not None
    assert again.form.enabled is False


async def test_a_commit_without_the_check_arguments_still_runs(
    store: PostgresStore, backend: PostgresBackend
) -> None:
    """A server of the previous version, during a rolling deployment, names only the
    arguments it knows."""
    without = pg._COMMIT.replace(
        ",\n        p_check_form_id => %(check_form_id)s::text,"
        "\n        p_check_public_key => %(check_public_key)s::text",
        "",
    )
    assert without != pg._COMMIT
    params = mapping.commit_params(plan(submission(1), charge=quota(10)))
    await backend.execute("UPDATE forms SET enabled = false")

    async with store._db.connection() as conn:
        cursor = await conn.execute(without, params)
        row = await cursor.fetchone()

    assert row is not None
    assert row["outcome"] == "committed"
    assert await stored(store) == [submission(1)]
