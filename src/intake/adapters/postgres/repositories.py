"""The workspaces, forms and API keys repositories over the pool. Each method is one
statement on one connection taken from the pool and given back at once. Most statements
are SQLite's too (adapters/sql_statements.py), rendered for psycopg."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from intake.adapters import sql_statements as sql
from intake.adapters.form_cache import FORM_ID, PUBLIC_KEY, FormCache
from intake.adapters.postgres import file_storage, form_removal, mapping
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.sealed_columns import opened_form, sealed_form
from intake.adapters.sql_statements import for_psycopg
from intake.domain.model import ApiKey, Form, Workspace
from intake.ports.forms import FormContext
from intake.ports.sealer import Sealer
from intake.ports.workspaces import FormStatusCounts, FormUsage, WorkspaceSetup

# Workspaces

_INSERT_WORKSPACE = for_psycopg(sql.INSERT_WORKSPACE)
_UPDATE_WORKSPACE = for_psycopg(sql.UPDATE_WORKSPACE)
_GET_WORKSPACE = for_psycopg(sql.GET_WORKSPACE)
_LIST_WORKSPACES = for_psycopg(sql.LIST_WORKSPACES)
# The month's shards added up (migrations/0004_*.sql); no row counts as nothing.
_USAGE = """
    SELECT coalesce(sum(count), 0) AS count FROM monthly_usage_shards
    WHERE workspace_id = %s AND period = %s
"""
_USAGE_IN_PERIOD = for_psycopg(sql.USAGE_IN_PERIOD)
_FORM_USAGE = for_psycopg(sql.FORM_USAGE)
# Each form's submissions received in [since, until), by status: one range of
# submissions_form_created per form, whose entries hold the status (migration 0022),
# counted as it is read (SQLite's statement reads it once per status).
_STATUS_COUNTS = """
    SELECT f.form_id, c.accepted, c.spam, c.unverified
    FROM forms AS f CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE s.status = 'accepted') AS accepted,
            count(*) FILTER (WHERE s.status = 'spam') AS spam,
            count(*) FILTER (WHERE s.status = 'unverified') AS unverified
        FROM submissions AS s
        WHERE s.form_id = f.form_id AND s.created_at >= %(since)s AND s.created_at < %(until)s
    ) AS c
    WHERE f.workspace_id = %(workspace_id)s AND f.deleted_at IS NULL
    ORDER BY f.form_id
"""
_WORKSPACE_SETUP = for_psycopg(sql.WORKSPACE_SETUP)


class PostgresWorkspaces:
    def __init__(self, db: Database, forms_cache: FormCache | None = None) -> None:
        self._db = db
        # The forms' cached lookups hold their workspace: a change here ends them.
        self._forms_cache = forms_cache

    async def add(self, workspace: Workspace) -> None:
        await self._db.execute(_INSERT_WORKSPACE, ROW_MAPPER.workspace_params(workspace))

    async def get(self, workspace_id: str) -> Workspace | None:
        row = await self._db.fetch_one(_GET_WORKSPACE, (workspace_id,))
        return None if row is None else ROW_MAPPER.workspace_from_row(row)

    async def update(self, workspace: Workspace) -> None:
        await self._db.execute(_UPDATE_WORKSPACE, ROW_MAPPER.workspace_params(workspace))
        if self._forms_cache is not None:
            self._forms_cache.clear()

    async def list(self) -> list[Workspace]:
        return [
            ROW_MAPPER.workspace_from_row(row) for row in await self._db.fetch_all(_LIST_WORKSPACES)
        ]

    async def usage(self, workspace_id: str, period: str) -> int:
        row = await self._db.fetch_one(_USAGE, (workspace_id, period))
        return 0 if row is None else int(row["count"])

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        rows = await self._db.fetch_all(_USAGE_IN_PERIOD, (period,))
        return [(ROW_MAPPER.workspace_from_row(row), int(row["count"])) for row in rows]

    async def form_usage(self, workspace_id: str, period: str) -> Sequence[FormUsage]:
        rows = await self._db.fetch_all(_FORM_USAGE, sql.form_usage_params(workspace_id, period))
        return [
            FormUsage(row["form_id"], int(row["used"]), int(row["honeypot_hits"])) for row in rows
        ]

    async def status_counts(
        self, workspace_id: str, since: datetime, until: datetime
    ) -> Sequence[FormStatusCounts]:
        span = {"workspace_id": workspace_id, "since": since, "until": until}
        return [
            FormStatusCounts(row["form_id"], row["accepted"], row["spam"], row["unverified"])
            for row in await self._db.fetch_all(_STATUS_COUNTS, span)
        ]

    async def storage_used(self, workspace_id: str) -> int:
        return await file_storage.storage_used(self._db, workspace_id)

    async def setup(self, workspace_id: str) -> WorkspaceSetup:
        row = await self._db.fetch_one(_WORKSPACE_SETUP, {"workspace_id": workspace_id})
        assert row is not None  # a SELECT without FROM gives one row
        return WorkspaceSetup(row["has_form"], row["has_submission"], row["has_destination"])


# Forms

_INSERT_FORM = for_psycopg(sql.INSERT_FORM)
_UPDATE_FORM = for_psycopg(sql.UPDATE_FORM)
_GET_FORM = for_psycopg(sql.GET_FORM)
_LIST_FORMS = for_psycopg(sql.LIST_FORMS)
_LIST_WORKSPACE_FORMS = for_psycopg(sql.LIST_WORKSPACE_FORMS)
_RESOLVE_PUBLIC_KEY = for_psycopg(sql.RESOLVE_PUBLIC_KEY)
_RESOLVE_ID = for_psycopg(sql.RESOLVE_ID)


class PostgresForms:
    def __init__(self, db: Database, sealer: Sealer, cache: FormCache | None = None) -> None:
        self._db = db
        self._sealer = sealer
        # Step 1's answers until a change (adapters/form_cache.py); None: always asked.
        self._cache = cache

    async def add(self, form: Form) -> None:
        await self._db.execute(
            _INSERT_FORM, ROW_MAPPER.form_params(sealed_form(form, self._sealer))
        )
        if self._cache is not None:
            self._cache.clear()

    async def get(self, form_id: str) -> Form | None:
        row = await self._db.fetch_one(_GET_FORM, (form_id,))
        return None if row is None else opened_form(ROW_MAPPER.form_from_row(row), self._sealer)

    async def update(self, form: Form) -> None:
        # The key is a column of the row, not a second index to keep: a rotated key is gone.
        await self._db.execute(
            _UPDATE_FORM, ROW_MAPPER.form_params(sealed_form(form, self._sealer))
        )
        if self._cache is not None:
            self._cache.clear()

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        rows = (
            await self._db.fetch_all(_LIST_FORMS)
            if workspace_id is None
            else await self._db.fetch_all(_LIST_WORKSPACE_FORMS, (workspace_id,))
        )
        return [opened_form(ROW_MAPPER.form_from_row(row), self._sealer) for row in rows]

    async def mark_deleted(self, form_id: str, at: datetime) -> bool:
        marked = await form_removal.mark_deleted(self._db, form_id, at)
        if self._cache is not None:
            self._cache.clear()
        return marked

    async def deleted(self, after: str, limit: int) -> Sequence[str]:
        return await form_removal.deleted(self._db, after, limit)

    async def remove_deleted(self, form_id: str) -> bool:
        return await form_removal.remove_deleted(self._db, form_id)

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return await self._resolve(_RESOLVE_PUBLIC_KEY, PUBLIC_KEY, public_form_key)

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return await self._resolve(_RESOLVE_ID, FORM_ID, form_id)

    async def _resolve(self, query: str, kind: str, value: str) -> FormContext | None:
        async def ask() -> FormContext | None:
            row = await self._db.fetch_one(query, (value,))
            if row is None:
                return None
            # Opened before the cache keeps it: a submission does not decrypt again.
            return FormContext(
                opened_form(ROW_MAPPER.form_from_row(row), self._sealer),
                ROW_MAPPER.workspace_from_row(row, prefix="w_"),
            )

        if self._cache is None:
            return await ask()
        return await self._cache.lookup(kind, value, ask)


# API keys

_INSERT_API_KEY = for_psycopg(sql.INSERT_API_KEY)
_FIND_API_KEY = for_psycopg(sql.FIND_API_KEY)
_GET_API_KEY = for_psycopg(sql.GET_API_KEY)
_LIST_API_KEYS = for_psycopg(sql.LIST_API_KEYS)
_REVOKE_API_KEY = for_psycopg(sql.REVOKE_API_KEY)


class PostgresApiKeys:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, key: ApiKey) -> None:
        await self._db.execute(_INSERT_API_KEY, ROW_MAPPER.api_key_params(key))

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        row = await self._db.fetch_one(_FIND_API_KEY, (key_hash,))
        return None if row is None else ROW_MAPPER.api_key_from_row(row)

    async def get(self, key_id: str) -> ApiKey | None:
        row = await self._db.fetch_one(_GET_API_KEY, (key_id,))
        return None if row is None else ROW_MAPPER.api_key_from_row(row)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        return await self._db.execute(_REVOKE_API_KEY, (mapping.moment(when), key_id)) > 0

    async def list(self, workspace_id: str) -> list[ApiKey]:
        rows = await self._db.fetch_all(_LIST_API_KEYS, (workspace_id,))
        return [ROW_MAPPER.api_key_from_row(row) for row in rows]
