"""A submission's spam reasons, in every store: written by its commit (alone, or among
commits made together), read back wherever a submission is read, kept through triage;
and, on the SQL stores, a database of the version before reads its rows as having none,
while a server of that version still commits."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg
import pytest
from attrs import evolve

from intake.adapters.postgres import mapping as pg_mapping
from intake.adapters.postgres import open_postgres_store
from intake.adapters.postgres import submissions as pg_submissions
from intake.adapters.sqlite import open_sqlite_store
from intake.adapters.sqlite.mapping import ROW_MAPPER as LITE_ROW_MAPPER
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.triage import release_event
from intake.ports.store import Store
from intake.ports.submissions import Committed
from intake.ports.triage import Release
from tests.contract.builders import (
    PERIOD,
    T0,
    WORKSPACE_ID,
    form,
    plan,
    quota,
    seed,
    stored,
    submission,
)
from tests.contract.old_schemas import (
    old_form,
    postgres_before,
    postgres_workspace,
    sqlite_before,
    sqlite_workspace,
)
from tests.contract.test_postgres import empty_url  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio

SQLITE_NAME = "0022_spam_reasons"  # the migration under test
PG_NAME = "0024_spam_reasons"
# Hostile text, as a reason quoting a visitor's words may hold: quotes, markup, a
# right-to-left override, a backslash, NUL (which PostgreSQL's text holds only escaped,
# as the JSON text holds it), a character beyond the BMP.
REASONS = ("filter:0.97", "links:3", 'token:"<b>\u202eviagra</b>"', "token:ï🙂\\\x00")


def with_reasons(n: int, reasons: tuple[str, ...] = REASONS, **kwargs: object) -> Submission:
    return evolve(submission(n, **kwargs), spam_reasons=reasons)  # type: ignore[arg-type]


async def test_a_commit_keeps_the_reasons_and_every_read_gives_them_back(store: Store) -> None:
    await seed(store)
    sub = with_reasons(1, status=SubmissionStatus.SPAM)
    none = submission(2)

    for each in (sub, none):
        assert await store.submissions.commit(plan(each)) == Committed()

    assert await store.submissions.get(sub.submission_id) == sub
    assert await stored(store) == [sub, none]
    assert none.spam_reasons == ()
    assert (await store.submissions.get(none.submission_id)) == none


async def test_commits_made_together_each_keep_their_own_reasons(store: Store) -> None:
    await seed(store)
    subs = [with_reasons(n, (f"links:{n}", f"token:word{n}")) for n in range(1, 7)]

    results = await asyncio.gather(
        *(store.submissions.commit(plan(each, charge=quota(100))) for each in subs)
    )

    assert results == [Committed()] * len(subs)
    assert await stored(store) == subs


async def test_triage_keeps_the_reasons(store: Store) -> None:
    await seed(store)
    sub = with_reasons(1, status=SubmissionStatus.SPAM)
    await store.submissions.commit(plan(sub))
    release = Release(sub.submission_id, release_event("evt_release", sub, None, T0), PERIOD)

    released = await store.submissions.release(release)
    marked = await store.submissions.mark_spam(sub.submission_id)

    assert released is not None
    assert released.submission.spam_reasons == REASONS
    assert marked is not None
    assert marked.spam_reasons == REASONS
    assert await store.submissions.get(sub.submission_id) == sub


async def test_a_sqlite_file_of_the_version_before_reads_its_rows_as_having_none(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    old = submission(1)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        sqlite_before(conn, SQLITE_NAME)
        sqlite_workspace(conn, WORKSPACE_ID)
        conn.execute(*old_form(LITE_ROW_MAPPER.form_params(form()), ":{}"))
        params = LITE_ROW_MAPPER.submission_params(old)
        del params["spam_reasons"]
        conn.execute(
            f"INSERT INTO submissions ({', '.join(params)})"
            f" VALUES ({', '.join(':' + name for name in params)})",
            params,
        )

    store = await open_sqlite_store(f"sqlite:///{path}")
    try:
        assert SQLITE_NAME in await store.migrate()
        assert await store.submissions.get(old.submission_id) == old
        new = with_reasons(2)
        assert await store.submissions.commit(plan(new)) == Committed()
        assert await stored(store) == [old, new]
    finally:
        await store.close()


@pytest.mark.services
async def test_a_postgres_database_of_the_version_before_reads_its_rows_as_having_none(
    empty_url: str,  # noqa: F811
) -> None:
    old = submission(1)
    async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
        await postgres_before(conn, PG_NAME)
        rows = pg_mapping.ROW_MAPPER
        await postgres_workspace(conn, WORKSPACE_ID)
        await conn.execute(*old_form(rows.form_params(form()), "%({})s"))
        params = rows.submission_params(old)
        del params["spam_reasons"]
        await conn.execute(
            f"INSERT INTO submissions ({', '.join(params)})"
            f" VALUES ({', '.join(f'%({name})s' for name in params)})",
            params,
        )
    store = await open_postgres_store(empty_url)
    try:
        assert PG_NAME in await store.migrate()
        assert await store.submissions.get(old.submission_id) == old
    finally:
        await store.close()


@pytest.mark.services
async def test_a_postgres_commit_of_the_version_before_still_commits_with_no_reasons(
    empty_url: str,  # noqa: F811
) -> None:
    # During a rolling deployment a server of the version before calls the function
    # without p_spam_reasons (nor the later p_search_text): its submission is stored,
    # with none.
    previous_call = "\n".join(
        line
        for line in pg_submissions._COMMIT.splitlines()
        if "p_spam_reasons" not in line and "p_search_text" not in line
    ).replace("%(storage_ceiling)s::bigint,", "%(storage_ceiling)s::bigint")
    assert previous_call != pg_submissions._COMMIT
    store = await open_postgres_store(empty_url)
    try:
        await store.migrate()
        await seed(store)
        sub = submission(1)
        params = pg_mapping.commit_params(plan(with_reasons(1)))
        del params["spam_reasons"]
        async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
            cursor = await conn.execute(previous_call, params)
            row = await cursor.fetchone()

        assert row is not None
        assert row[0] == "committed"
        assert await store.submissions.get(sub.submission_id) == sub
    finally:
        await store.close()
