"""The workspaces, forms and API keys repositories over one SQLite connection. Each method
sends one function to the worker thread; the function holds all the SQL of the operation."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from intake.adapters import sql_statements as sql
from intake.adapters.form_cache import FORM_ID, PUBLIC_KEY, FormCache
from intake.adapters.sealed_columns import opened_context, opened_form, sealed_form
from intake.adapters.sqlite import file_storage, form_removal, mapping
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.adapters.sqlite.worker import Worker
from intake.domain.model import ApiKey, Form, Workspace
from intake.ports.forms import FormContext
from intake.ports.sealer import Sealer
from intake.ports.workspaces import FormStatusCounts, FormUsage, WorkspaceSetup

# The statements are the ones PostgreSQL sends too (adapters/sql_statements.py), in
# sqlite3's own placeholder styles: sent as written.

# Workspaces

_INSERT_WORKSPACE = sql.INSERT_WORKSPACE
_UPDATE_WORKSPACE = sql.UPDATE_WORKSPACE
_GET_WORKSPACE = sql.GET_WORKSPACE
_LIST_WORKSPACES = sql.LIST_WORKSPACES
_USAGE = "SELECT count FROM monthly_usage WHERE workspace_id = ? AND period = ?"
_USAGE_IN_PERIOD = sql.USAGE_IN_PERIOD
_FORM_USAGE = sql.FORM_USAGE
_STATUS_COUNTS = sql.STATUS_COUNTS


def _add_workspace(conn: sqlite3.Connection, workspace: Workspace) -> None:
    conn.execute(_INSERT_WORKSPACE, ROW_MAPPER.workspace_params(workspace))


def _get_workspace(conn: sqlite3.Connection, workspace_id: str) -> Workspace | None:
    row = conn.execute(_GET_WORKSPACE, (workspace_id,)).fetchone()
    return None if row is None else ROW_MAPPER.workspace_from_row(row)


def _update_workspace(conn: sqlite3.Connection, workspace: Workspace) -> None:
    conn.execute(_UPDATE_WORKSPACE, ROW_MAPPER.workspace_params(workspace))


def _list_workspaces(conn: sqlite3.Connection) -> list[Workspace]:
    return [ROW_MAPPER.workspace_from_row(row) for row in conn.execute(_LIST_WORKSPACES)]


def _usage(conn: sqlite3.Connection, workspace_id: str, period: str) -> int:
    row = conn.execute(_USAGE, (workspace_id, period)).fetchone()
    return 0 if row is None else int(row["count"])


def _usage_in_period(conn: sqlite3.Connection, period: str) -> list[tuple[Workspace, int]]:
    return [
        (ROW_MAPPER.workspace_from_row(row), int(row["count"]))
        for row in conn.execute(_USAGE_IN_PERIOD, (period,))
    ]


def _form_usage(conn: sqlite3.Connection, workspace_id: str, period: str) -> list[FormUsage]:
    rows = conn.execute(_FORM_USAGE, sql.form_usage_params(workspace_id, period))
    return [FormUsage(row["form_id"], int(row["used"]), int(row["honeypot_hits"])) for row in rows]


def _status_counts(
    conn: sqlite3.Connection, workspace_id: str, since: datetime, until: datetime
) -> list[FormStatusCounts]:
    span = {"workspace_id": workspace_id, "since": mapping.time_text(since)}
    rows = conn.execute(_STATUS_COUNTS, span | {"until": mapping.time_text(until)})
    return [
        FormStatusCounts(row["form_id"], row["accepted"], row["spam"], row["unverified"])
        for row in rows
    ]


class SqliteWorkspaces:
    def __init__(self, worker: Worker, forms_cache: FormCache | None = None) -> None:
        self._worker = worker
        # The forms' kept lookups hold their workspace: a change here ends them.
        self._forms_cache = forms_cache

    async def add(self, workspace: Workspace) -> None:
        await self._worker.run(_add_workspace, workspace)

    async def get(self, workspace_id: str) -> Workspace | None:
        return await self._worker.run(_get_workspace, workspace_id)

    async def update(self, workspace: Workspace) -> None:
        await self._worker.run(_update_workspace, workspace)
        if self._forms_cache is not None:
            self._forms_cache.clear()

    async def list(self) -> list[Workspace]:
        return await self._worker.run(_list_workspaces)

    async def usage(self, workspace_id: str, period: str) -> int:
        return await self._worker.run(_usage, workspace_id, period)

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        return await self._worker.run(_usage_in_period, period)

    async def form_usage(self, workspace_id: str, period: str) -> Sequence[FormUsage]:
        return await self._worker.run(_form_usage, workspace_id, period)

    async def status_counts(
        self, workspace_id: str, since: datetime, until: datetime
    ) -> Sequence[FormStatusCounts]:
        return await self._worker.run(_status_counts, workspace_id, since, until)

    async def storage_used(self, workspace_id: str) -> int:
        return await self._worker.run(file_storage.storage_used, workspace_id)

    async def setup(self, workspace_id: str) -> WorkspaceSetup:
        return await self._worker.run(_setup, workspace_id)


def _setup(conn: sqlite3.Connection, workspace_id: str) -> WorkspaceSetup:
    row = conn.execute(sql.WORKSPACE_SETUP, {"workspace_id": workspace_id}).fetchone()
    return WorkspaceSetup(
        bool(row["has_form"]), bool(row["has_submission"]), bool(row["has_destination"])
    )


# Forms

_INSERT_FORM = sql.INSERT_FORM
_UPDATE_FORM = sql.UPDATE_FORM
_GET_FORM = sql.GET_FORM
_LIST_FORMS = sql.LIST_FORMS
_LIST_WORKSPACE_FORMS = sql.LIST_WORKSPACE_FORMS
_RESOLVE_PUBLIC_KEY = sql.RESOLVE_PUBLIC_KEY
_RESOLVE_ID = sql.RESOLVE_ID


def _add_form(conn: sqlite3.Connection, form: Form) -> None:
    conn.execute(_INSERT_FORM, ROW_MAPPER.form_params(form))


def _get_form(conn: sqlite3.Connection, form_id: str) -> Form | None:
    row = conn.execute(_GET_FORM, (form_id,)).fetchone()
    return None if row is None else ROW_MAPPER.form_from_row(row)


def _update_form(conn: sqlite3.Connection, form: Form) -> None:
    # The key is a column of the row, not a second index to keep: a rotated key is gone.
    conn.execute(_UPDATE_FORM, ROW_MAPPER.form_params(form))


def _list_forms(conn: sqlite3.Connection, workspace_id: str | None) -> list[Form]:
    rows = (
        conn.execute(_LIST_FORMS)
        if workspace_id is None
        else conn.execute(_LIST_WORKSPACE_FORMS, (workspace_id,))
    )
    return [ROW_MAPPER.form_from_row(row) for row in rows]


def _resolve(conn: sqlite3.Connection, query: str, value: str) -> FormContext | None:
    row = conn.execute(query, (value,)).fetchone()
    if row is None:
        return None
    return FormContext(
        ROW_MAPPER.form_from_row(row), ROW_MAPPER.workspace_from_row(row, prefix="w_")
    )


class SqliteForms:
    def __init__(self, worker: Worker, sealer: Sealer, cache: FormCache | None = None) -> None:
        self._worker = worker
        self._sealer = sealer
        # Step 1's answers, briefly (adapters/form_cache.py); None: always asked.
        self._cache = cache

    def _changed(self) -> None:
        if self._cache is not None:
            self._cache.clear()

    async def add(self, form: Form) -> None:
        await self._worker.run(_add_form, sealed_form(form, self._sealer))
        self._changed()

    async def get(self, form_id: str) -> Form | None:
        form = await self._worker.run(_get_form, form_id)
        return None if form is None else opened_form(form, self._sealer)

    async def update(self, form: Form) -> None:
        await self._worker.run(_update_form, sealed_form(form, self._sealer))
        self._changed()

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        forms = await self._worker.run(_list_forms, workspace_id)
        return [opened_form(form, self._sealer) for form in forms]

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return await self._resolve(_RESOLVE_PUBLIC_KEY, PUBLIC_KEY, public_form_key)

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return await self._resolve(_RESOLVE_ID, FORM_ID, form_id)

    async def mark_deleted(self, form_id: str, at: datetime) -> bool:
        marked = await self._worker.run(form_removal.mark_deleted, form_id, at)
        self._changed()
        return marked

    async def deleted(self, after: str, limit: int) -> Sequence[str]:
        return await self._worker.run(form_removal.deleted, after, limit)

    async def remove_deleted(self, form_id: str) -> bool:
        return await self._worker.run(form_removal.remove_deleted, form_id)

    async def _resolve(self, query: str, kind: str, value: str) -> FormContext | None:
        async def ask() -> FormContext | None:
            # Opened before the cache keeps it: a submission does not decrypt again.
            return opened_context(await self._worker.run(_resolve, query, value), self._sealer)

        if self._cache is None:
            return await ask()
        return await self._cache.lookup(kind, value, ask)


# API keys

_INSERT_API_KEY = sql.INSERT_API_KEY
_FIND_API_KEY = sql.FIND_API_KEY
_GET_API_KEY = sql.GET_API_KEY
_LIST_API_KEYS = sql.LIST_API_KEYS
_REVOKE_API_KEY = sql.REVOKE_API_KEY


def _add_api_key(conn: sqlite3.Connection, key: ApiKey) -> None:
    conn.execute(_INSERT_API_KEY, ROW_MAPPER.api_key_params(key))


def _find_api_key(conn: sqlite3.Connection, key_hash: bytes) -> ApiKey | None:
    row = conn.execute(_FIND_API_KEY, (key_hash,)).fetchone()
    return None if row is None else ROW_MAPPER.api_key_from_row(row)


def _get_api_key(conn: sqlite3.Connection, key_id: str) -> ApiKey | None:
    row = conn.execute(_GET_API_KEY, (key_id,)).fetchone()
    return None if row is None else ROW_MAPPER.api_key_from_row(row)


def _revoke_api_key(conn: sqlite3.Connection, key_id: str, when: datetime) -> bool:
    return conn.execute(_REVOKE_API_KEY, (mapping.time_text(when), key_id)).rowcount > 0


def _list_api_keys(conn: sqlite3.Connection, workspace_id: str) -> list[ApiKey]:
    return [
        ROW_MAPPER.api_key_from_row(row) for row in conn.execute(_LIST_API_KEYS, (workspace_id,))
    ]


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
