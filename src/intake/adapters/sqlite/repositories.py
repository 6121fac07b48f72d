"""The workspaces, forms and API keys repositories over one SQLite connection. Each method
sends one function to the worker thread; the function holds all the SQL of the operation."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from intake.adapters.sqlite import file_storage
from intake.adapters.sqlite import mapping as m
from intake.adapters.sqlite.mapping import ROWS
from intake.adapters.sqlite.worker import Worker
from intake.domain.model import ApiKey, Form, Workspace
from intake.ports.forms import FormContext

# The SQL is written out in full, with named parameters matching `mapping`'s params.

# Workspaces

_INSERT_WORKSPACE = """
    INSERT INTO workspaces (
        workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    ) VALUES (
        :workspace_id, :name, :plan, :monthly_limit, :active, :created_at, :storage_limit
    )
"""
_UPDATE_WORKSPACE = """
    UPDATE workspaces
    SET name = :name, plan = :plan, monthly_limit = :monthly_limit, active = :active,
        created_at = :created_at, storage_limit = :storage_limit
    WHERE workspace_id = :workspace_id
"""
_GET_WORKSPACE = """
    SELECT workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    FROM workspaces WHERE workspace_id = ?
"""
_LIST_WORKSPACES = """
    SELECT workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    FROM workspaces ORDER BY workspace_id
"""
_USAGE = "SELECT count FROM monthly_usage WHERE workspace_id = ? AND period = ?"
_USAGE_IN_PERIOD = """
    SELECT w.workspace_id, w.name, w.plan, w.monthly_limit, w.active, w.created_at,
        w.storage_limit, u.count
    FROM monthly_usage AS u JOIN workspaces AS w ON w.workspace_id = u.workspace_id
    WHERE u.period = ? AND u.count > 0
    ORDER BY w.workspace_id
"""


def _add_workspace(conn: sqlite3.Connection, workspace: Workspace) -> None:
    conn.execute(_INSERT_WORKSPACE, ROWS.workspace_params(workspace))


def _get_workspace(conn: sqlite3.Connection, workspace_id: str) -> Workspace | None:
    row = conn.execute(_GET_WORKSPACE, (workspace_id,)).fetchone()
    return None if row is None else ROWS.workspace_from_row(row)


def _update_workspace(conn: sqlite3.Connection, workspace: Workspace) -> None:
    conn.execute(_UPDATE_WORKSPACE, ROWS.workspace_params(workspace))


def _list_workspaces(conn: sqlite3.Connection) -> list[Workspace]:
    return [ROWS.workspace_from_row(row) for row in conn.execute(_LIST_WORKSPACES)]


def _usage(conn: sqlite3.Connection, workspace_id: str, period: str) -> int:
    row = conn.execute(_USAGE, (workspace_id, period)).fetchone()
    return 0 if row is None else int(row["count"])


def _usage_in_period(conn: sqlite3.Connection, period: str) -> list[tuple[Workspace, int]]:
    return [
        (ROWS.workspace_from_row(row), int(row["count"]))
        for row in conn.execute(_USAGE_IN_PERIOD, (period,))
    ]


class SqliteWorkspaces:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def add(self, workspace: Workspace) -> None:
        await self._worker.run(_add_workspace, workspace)

    async def get(self, workspace_id: str) -> Workspace | None:
        return await self._worker.run(_get_workspace, workspace_id)

    async def update(self, workspace: Workspace) -> None:
        await self._worker.run(_update_workspace, workspace)

    async def list(self) -> list[Workspace]:
        return await self._worker.run(_list_workspaces)

    async def usage(self, workspace_id: str, period: str) -> int:
        return await self._worker.run(_usage, workspace_id, period)

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        return await self._worker.run(_usage_in_period, period)

    async def storage_used(self, workspace_id: str) -> int:
        return await self._worker.run(file_storage.storage_used, workspace_id)


# Forms

_INSERT_FORM = """
    INSERT INTO forms (
        form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at,
        uploads
    ) VALUES (
        :form_id, :workspace_id, :public_form_key, :name, :mode, :enabled, :allowed_origins,
        :rules, :spam_threshold, :challenge_provider, :challenge_secret, :redirect_url,
        :created_at, :uploads
    )
"""
_UPDATE_FORM = """
    UPDATE forms
    SET workspace_id = :workspace_id, public_form_key = :public_form_key, name = :name,
        mode = :mode, enabled = :enabled, allowed_origins = :allowed_origins, rules = :rules,
        spam_threshold = :spam_threshold, challenge_provider = :challenge_provider,
        challenge_secret = :challenge_secret, redirect_url = :redirect_url,
        created_at = :created_at, uploads = :uploads
    WHERE form_id = :form_id
"""
_SELECT_FORM = """
    SELECT form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at, uploads
    FROM forms
"""
_GET_FORM = _SELECT_FORM + " WHERE form_id = ?"
_LIST_FORMS = _SELECT_FORM + " ORDER BY form_id"
_LIST_WORKSPACE_FORMS = _SELECT_FORM + " WHERE workspace_id = ? ORDER BY form_id"
# The form and its workspace in one statement; the workspace's columns are aliased `w_*`.
_SELECT_CONTEXT = """
    SELECT f.form_id, f.workspace_id, f.public_form_key, f.name, f.mode, f.enabled,
        f.allowed_origins, f.rules, f.spam_threshold, f.challenge_provider,
        f.challenge_secret, f.redirect_url, f.created_at, f.uploads,
        w.workspace_id AS w_workspace_id, w.name AS w_name, w.plan AS w_plan,
        w.monthly_limit AS w_monthly_limit, w.active AS w_active,
        w.created_at AS w_created_at, w.storage_limit AS w_storage_limit
    FROM forms AS f JOIN workspaces AS w ON w.workspace_id = f.workspace_id
"""
_RESOLVE_PUBLIC_KEY = _SELECT_CONTEXT + " WHERE f.public_form_key = ?"
_RESOLVE_ID = _SELECT_CONTEXT + " WHERE f.form_id = ?"


def _add_form(conn: sqlite3.Connection, form: Form) -> None:
    conn.execute(_INSERT_FORM, ROWS.form_params(form))


def _get_form(conn: sqlite3.Connection, form_id: str) -> Form | None:
    row = conn.execute(_GET_FORM, (form_id,)).fetchone()
    return None if row is None else ROWS.form_from_row(row)


def _update_form(conn: sqlite3.Connection, form: Form) -> None:
    # The key is a column of the row, not a second index to keep: a rotated key is gone.
    conn.execute(_UPDATE_FORM, ROWS.form_params(form))


def _list_forms(conn: sqlite3.Connection, workspace_id: str | None) -> list[Form]:
    rows = (
        conn.execute(_LIST_FORMS)
        if workspace_id is None
        else conn.execute(_LIST_WORKSPACE_FORMS, (workspace_id,))
    )
    return [ROWS.form_from_row(row) for row in rows]


def _resolve(conn: sqlite3.Connection, query: str, value: str) -> FormContext | None:
    row = conn.execute(query, (value,)).fetchone()
    if row is None:
        return None
    return FormContext(ROWS.form_from_row(row), ROWS.workspace_from_row(row, prefix="w_"))


class SqliteForms:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def add(self, form: Form) -> None:
        await self._worker.run(_add_form, form)

    async def get(self, form_id: str) -> Form | None:
        return await self._worker.run(_get_form, form_id)

    async def update(self, form: Form) -> None:
        await self._worker.run(_update_form, form)

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        return await self._worker.run(_list_forms, workspace_id)

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return await self._worker.run(_resolve, _RESOLVE_PUBLIC_KEY, public_form_key)

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return await self._worker.run(_resolve, _RESOLVE_ID, form_id)


# API keys

_INSERT_API_KEY = """
    INSERT INTO api_keys (key_id, workspace_id, key_hash, prefix, created_at, revoked_at)
    VALUES (:key_id, :workspace_id, :key_hash, :prefix, :created_at, :revoked_at)
"""
_SELECT_API_KEY = """
    SELECT key_id, workspace_id, key_hash, prefix, created_at, revoked_at FROM api_keys
"""
_FIND_API_KEY = _SELECT_API_KEY + " WHERE key_hash = ?"
_GET_API_KEY = _SELECT_API_KEY + " WHERE key_id = ?"
_LIST_API_KEYS = _SELECT_API_KEY + " WHERE workspace_id = ? ORDER BY created_at, key_id"
# COALESCE keeps the first revocation time when a key is revoked again.
_REVOKE_API_KEY = "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ?"


def _add_api_key(conn: sqlite3.Connection, key: ApiKey) -> None:
    conn.execute(_INSERT_API_KEY, ROWS.api_key_params(key))


def _find_api_key(conn: sqlite3.Connection, key_hash: bytes) -> ApiKey | None:
    row = conn.execute(_FIND_API_KEY, (key_hash,)).fetchone()
    return None if row is None else ROWS.api_key_from_row(row)


def _get_api_key(conn: sqlite3.Connection, key_id: str) -> ApiKey | None:
    row = conn.execute(_GET_API_KEY, (key_id,)).fetchone()
    return None if row is None else ROWS.api_key_from_row(row)


def _revoke_api_key(conn: sqlite3.Connection, key_id: str, when: datetime) -> bool:
    return conn.execute(_REVOKE_API_KEY, (m.time_text(when), key_id)).rowcount > 0


def _list_api_keys(conn: sqlite3.Connection, workspace_id: str) -> list[ApiKey]:
    return [ROWS.api_key_from_row(row) for row in conn.execute(_LIST_API_KEYS, (workspace_id,))]


class SqliteApiKeys:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def add(self, key: ApiKey) -> None:
        await self._worker.run(_add_api_key, key)

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        return await self._worker.run(_find_api_key, key_hash)

    async def get(self, key_id: str) -> ApiKey | None:
        return await self._worker.run(_get_api_key, key_id)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        return await self._worker.run(_revoke_api_key, key_id, when)

    async def list(self, workspace_id: str) -> list[ApiKey]:
        return await self._worker.run(_list_api_keys, workspace_id)
