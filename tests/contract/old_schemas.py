"""Databases as an earlier version of intake left them: every migration before a named
one applied and recorded in the ledger, for the tests that migrate old rows forward.
Named, not counted from the end: a test of one migration keeps testing that one as
later migrations are added."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

import psycopg

from intake.adapters.postgres.migrations import _CREATE_LEDGER as PG_LEDGER
from intake.adapters.postgres.migrations import MIGRATIONS as PG_MIGRATIONS
from intake.adapters.postgres.migrations import REPEATABLES as PG_REPEATABLES
from intake.adapters.sql_migrations import Migration
from intake.adapters.sqlite.migrations import _CREATE_LEDGER as SQLITE_LEDGER
from intake.adapters.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS

APPLIED_AT = "2026-01-01T00:00:00.000000Z"


def _before(migrations: tuple[Migration, ...], name: str) -> list[Migration]:
    names = [migration.name for migration in migrations]
    if name not in names:
        raise ValueError(f"no migration {name!r}")
    return list(migrations[: names.index(name)])


def from_on(migrations: tuple[Migration, ...], name: str) -> list[str]:
    """The names `migrate()` applies to a database of the version before `name`."""
    return [m.name for m in migrations][len(_before(migrations, name)) :]


def postgres_from_on(name: str) -> list[str]:
    """The names PostgreSQL's `migrate()` applies to a database of the version before
    `name`: its migrations from `name` on, then the repeatable files it never had."""
    return from_on(PG_MIGRATIONS, name) + [r.name for r in PG_REPEATABLES]


def sqlite_before(conn: sqlite3.Connection, name: str) -> None:
    """The SQLite schema of the version before migration `name`, on `conn`."""
    conn.execute(SQLITE_LEDGER)
    for migration in _before(SQLITE_MIGRATIONS, name):
        for statement in migration.statements:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, APPLIED_AT),
        )


async def postgres_before(conn: psycopg.AsyncConnection[Any], name: str) -> None:
    """The PostgreSQL schema of the version before migration `name`, on `conn`."""
    await conn.execute(PG_LEDGER)
    for migration in _before(PG_MIGRATIONS, name):
        for statement in migration.statements:
            await conn.execute(statement)
        await conn.execute(
            "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
            (migration.version, migration.name),
        )


# A workspace, in the columns every version has had.
_WORKSPACE = (
    "INSERT INTO workspaces (workspace_id, name, plan, active) VALUES ({0}, 'A', 'free', {1})"
)


# A form, in the columns of the versions these tests start from: a column added since
# (a retention, its messages...) is left to the migration's default.
_FORM_COLUMNS = (
    "form_id", "workspace_id", "public_form_key", "name", "mode", "enabled",
    "allowed_origins", "rules", "spam_threshold", "challenge_provider", "challenge_secret",
    "redirect_url", "created_at", "uploads",
)  # fmt: skip


def old_form(params: Mapping[str, Any], placeholder: str) -> tuple[str, dict[str, Any]]:
    """An INSERT of a form's `params` (RowMapper.form_params) in those columns;
    `placeholder` spells a parameter (`:{}` for SQLite, `%({})s` for psycopg)."""
    values = ", ".join(placeholder.format(name) for name in _FORM_COLUMNS)
    statement = f"INSERT INTO forms ({', '.join(_FORM_COLUMNS)}) VALUES ({values})"
    return statement, {name: params[name] for name in _FORM_COLUMNS}


def sqlite_workspace(conn: sqlite3.Connection, workspace_id: str) -> None:
    conn.execute(_WORKSPACE.format("?", "1"), (workspace_id,))


async def postgres_workspace(conn: psycopg.AsyncConnection[Any], workspace_id: str) -> None:
    await conn.execute(_WORKSPACE.format("%s", "true"), (workspace_id,))
