"""The migration to per-form usage: a database of the version before charges the accepted
submissions it already holds to the month they came in, and no others."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from intake.adapters.postgres import mapping as pg_mapping
from intake.adapters.postgres import open_postgres_store
from intake.adapters.sqlite import open_sqlite_store
from intake.adapters.sqlite.mapping import ROW_MAPPER as LITE_ROW_MAPPER
from intake.domain.model import Submission, SubmissionStatus
from intake.ports.workspaces import FormUsage
from tests.contract.builders import FORM_ID, WORKSPACE_ID, form, submission
from tests.contract.old_schemas import (
    old_form,
    postgres_before,
    postgres_workspace,
    sqlite_before,
    sqlite_workspace,
)
from tests.contract.test_postgres import empty_url  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio

SQLITE_NAME = "0010_form_usage"  # the migration under test
PG_NAME = "0012_form_usage"
# The columns every version has: a row as the version before wrote it.
_COLUMNS = (
    "submission_id, form_id, workspace_id, status, data, subject, reply_to, spam_score,"
    " client_ip, created_at"
)


def old_rows() -> list[Submission]:
    return [
        submission(1),  # 2026-01
        submission(2, status=SubmissionStatus.SPAM),
        submission(3, status=SubmissionStatus.UNVERIFIED),
        submission(4),
    ]


EXPECTED = [FormUsage(FORM_ID, 2, 0)]


async def test_a_sqlite_file_of_the_version_before_charges_its_accepted_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        sqlite_before(conn, SQLITE_NAME)
        sqlite_workspace(conn, WORKSPACE_ID)
        conn.execute(*old_form(LITE_ROW_MAPPER.form_params(form()), ":{}"))
        placeholders = ", ".join(f":{name.strip()}" for name in _COLUMNS.split(","))
        for sub in old_rows():
            conn.execute(
                f"INSERT INTO submissions ({_COLUMNS}) VALUES ({placeholders})",
                LITE_ROW_MAPPER.submission_params(sub),
            )

    store = await open_sqlite_store(f"sqlite:///{path}")
    try:
        assert "0010_form_usage" in await store.migrate()
        assert list(await store.workspaces.form_usage(WORKSPACE_ID, "2026-01")) == EXPECTED
    finally:
        await store.close()


@pytest.mark.services
async def test_a_postgres_database_of_the_version_before_charges_its_accepted_rows(
    empty_url: str,  # noqa: F811
) -> None:
    async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
        await postgres_before(conn, PG_NAME)
        rows = pg_mapping.ROW_MAPPER
        await postgres_workspace(conn, WORKSPACE_ID)
        await conn.execute(*old_form(rows.form_params(form()), "%({})s"))
        placeholders = ", ".join(f"%({name.strip()})s" for name in _COLUMNS.split(","))
        for sub in old_rows():
            await conn.execute(
                f"INSERT INTO submissions ({_COLUMNS}) VALUES ({placeholders})",
                rows.submission_params(sub),
            )
    store = await open_postgres_store(empty_url)
    try:
        assert "0012_form_usage" in await store.migrate()
        assert list(await store.workspaces.form_usage(WORKSPACE_ID, "2026-01")) == EXPECTED
    finally:
        await store.close()
