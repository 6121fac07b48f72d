"""The migration to the storage ceiling: a database of the version before counts the
files it already holds, and a server of that version still commits during a rolling
deployment (PostgreSQL)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from intake.adapters.postgres import mapping as pg_mapping
from intake.adapters.postgres import open_postgres_store
from intake.adapters.postgres import submissions as pg_submissions
from intake.adapters.sqlite import open_sqlite_store
from intake.adapters.sqlite.mapping import ROW_MAPPER as LITE_ROW_MAPPER
from intake.domain.model import Submission, SubmissionStatus
from intake.ports.submissions import Committed
from tests.contract.builders import WORKSPACE_ID, form, plan, seed, submission
from tests.contract.old_schemas import (
    old_form,
    postgres_before,
    postgres_workspace,
    sqlite_before,
    sqlite_workspace,
)
from tests.contract.test_postgres import empty_url  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio

SQLITE_NAME = "0006_storage_ceiling"  # the migration under test
PG_NAME = "0008_storage_ceiling"


def old_rows() -> list[Submission]:
    return [
        submission(1, files=2),
        submission(2, files=1, status=SubmissionStatus.SPAM),
        submission(3),
    ]


def total(subs: list[Submission]) -> int:
    return sum(f.size for sub in subs for f in sub.files)


async def test_a_sqlite_file_of_the_version_before_counts_its_files(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        sqlite_before(conn, SQLITE_NAME)
        sqlite_workspace(conn, WORKSPACE_ID)
        conn.execute(*old_form(LITE_ROW_MAPPER.form_params(form()), ":{}"))
        for sub in old_rows():
            conn.execute(
                "INSERT INTO submissions (submission_id, form_id, workspace_id, status, data,"
                " subject, reply_to, spam_score, client_ip, created_at, files) VALUES"
                " (:submission_id, :form_id, :workspace_id, :status, :data, :subject,"
                " :reply_to, :spam_score, :client_ip, :created_at, :files)",
                LITE_ROW_MAPPER.submission_params(sub),
            )

    store = await open_sqlite_store(f"sqlite:///{path}")
    try:
        assert "0006_storage_ceiling" in await store.migrate()
        assert await store.workspaces.storage_used(WORKSPACE_ID) == total(old_rows())
        found = await store.workspaces.get(WORKSPACE_ID)
        assert found is not None
        assert found.storage_limit is None  # the deployment's ceiling
    finally:
        await store.close()


@pytest.mark.services
async def test_a_postgres_database_of_the_version_before_counts_its_files(
    empty_url: str,  # noqa: F811
) -> None:
    async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
        await postgres_before(conn, PG_NAME)
        rows = pg_mapping.ROW_MAPPER
        await postgres_workspace(conn, WORKSPACE_ID)
        await conn.execute(*old_form(rows.form_params(form()), "%({})s"))
        for sub in old_rows():
            await conn.execute(
                "INSERT INTO submissions (submission_id, form_id, workspace_id, status, data,"
                " subject, reply_to, spam_score, client_ip, created_at, files) VALUES"
                " (%(submission_id)s, %(form_id)s, %(workspace_id)s, %(status)s, %(data)s,"
                " %(subject)s, %(reply_to)s, %(spam_score)s, %(client_ip)s, %(created_at)s,"
                " %(files)s)",
                rows.submission_params(sub),
            )
    store = await open_postgres_store(empty_url)
    try:
        assert "0008_storage_ceiling" in await store.migrate()
        assert await store.workspaces.storage_used(WORKSPACE_ID) == total(old_rows())
        found = await store.workspaces.get(WORKSPACE_ID)
        assert found is not None
        assert found.storage_limit is None  # the deployment's ceiling
    finally:
        await store.close()


@pytest.mark.services
async def test_a_postgres_commit_of_the_version_before_still_commits(
    empty_url: str,  # noqa: F811
) -> None:
    # A server of the version before calls the function without the storage arguments
    # (nor the later spam reasons and search text): its submission is stored, and its files are not
    # counted.
    previous_call = "\n".join(
        line
        for line in pg_submissions._COMMIT.splitlines()
        if not any(name in line for name in ("p_storage", "p_spam_reasons", "p_search_text"))
    ).replace("%(files)s::jsonb,", "%(files)s::jsonb")
    assert previous_call != pg_submissions._COMMIT
    store = await open_postgres_store(empty_url)
    try:
        await store.migrate()
        await seed(store)
        sub = submission(1, files=1)
        params = pg_mapping.commit_params(plan(sub))
        del params["storage_bytes"], params["storage_ceiling"], params["spam_reasons"]
        async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
            cursor = await conn.execute(previous_call, params)
            row = await cursor.fetchone()

        assert row is not None
        assert row[0] == "committed"
        assert await store.submissions.get(sub.submission_id) == sub
        assert await store.submissions.commit(plan(submission(2))) == Committed()
    finally:
        await store.close()
