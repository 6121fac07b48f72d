"""The workspaces, forms and API keys repositories over the pool. Each method is one
statement on one connection taken from the pool and given back at once; the SQL is written
out in full, with named parameters matching `mapping`'s params."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from intake.adapters.form_cache import FormCache
from intake.adapters.postgres import file_storage
from intake.adapters.postgres import mapping as m
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.mapping import ROWS
from intake.domain.model import ApiKey, Form, Workspace
from intake.ports.forms import FormContext

# Workspaces

_INSERT_WORKSPACE = """
    INSERT INTO workspaces (
        workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    ) VALUES (
        %(workspace_id)s, %(name)s, %(plan)s, %(monthly_limit)s, %(active)s, %(created_at)s,
        %(storage_limit)s
    )
"""
_UPDATE_WORKSPACE = """
    UPDATE workspaces
    SET name = %(name)s, plan = %(plan)s, monthly_limit = %(monthly_limit)s,
        active = %(active)s, created_at = %(created_at)s, storage_limit = %(storage_limit)s
    WHERE workspace_id = %(workspace_id)s
"""
_SELECT_WORKSPACE = """
    SELECT workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    FROM workspaces
"""
_GET_WORKSPACE = _SELECT_WORKSPACE + " WHERE workspace_id = %s"
_LIST_WORKSPACES = _SELECT_WORKSPACE + " ORDER BY workspace_id"
# The month's shards added up (migrations/0004_*.sql); no row counts as nothing.
_USAGE = """
    SELECT coalesce(sum(count), 0) AS count FROM monthly_usage_shards
    WHERE workspace_id = %s AND period = %s
"""
_USAGE_IN_PERIOD = """
    SELECT w.workspace_id, w.name, w.plan, w.monthly_limit, w.active, w.created_at,
        w.storage_limit, u.count
    FROM monthly_usage AS u JOIN workspaces AS w ON w.workspace_id = u.workspace_id
    WHERE u.period = %s AND u.count > 0
    ORDER BY w.workspace_id
"""


class PostgresWorkspaces:
    def __init__(self, db: Database, forms_cache: FormCache | None = None) -> None:
        self._db = db
        # The forms' cached lookups hold their workspace: a change here ends them.
        self._forms_cache = forms_cache

    async def add(self, workspace: Workspace) -> None:
        await self._db.execute(_INSERT_WORKSPACE, ROWS.workspace_params(workspace))

    async def get(self, workspace_id: str) -> Workspace | None:
        row = await self._db.fetch_one(_GET_WORKSPACE, (workspace_id,))
        return None if row is None else ROWS.workspace_from_row(row)

    async def update(self, workspace: Workspace) -> None:
        await self._db.execute(_UPDATE_WORKSPACE, ROWS.workspace_params(workspace))
        if self._forms_cache is not None:
            self._forms_cache.clear()

    async def list(self) -> list[Workspace]:
        return [ROWS.workspace_from_row(row) for row in await self._db.fetch_all(_LIST_WORKSPACES)]

    async def usage(self, workspace_id: str, period: str) -> int:
        row = await self._db.fetch_one(_USAGE, (workspace_id, period))
        return 0 if row is None else int(row["count"])

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        rows = await self._db.fetch_all(_USAGE_IN_PERIOD, (period,))
        return [(ROWS.workspace_from_row(row), int(row["count"])) for row in rows]

    async def storage_used(self, workspace_id: str) -> int:
        return await file_storage.storage_used(self._db, workspace_id)


# Forms

_INSERT_FORM = """
    INSERT INTO forms (
        form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at,
        uploads
    ) VALUES (
        %(form_id)s, %(workspace_id)s, %(public_form_key)s, %(name)s, %(mode)s, %(enabled)s,
        %(allowed_origins)s, %(rules)s, %(spam_threshold)s, %(challenge_provider)s,
        %(challenge_secret)s, %(redirect_url)s, %(created_at)s, %(uploads)s
    )
"""
_UPDATE_FORM = """
    UPDATE forms
    SET workspace_id = %(workspace_id)s, public_form_key = %(public_form_key)s,
        name = %(name)s, mode = %(mode)s, enabled = %(enabled)s,
        allowed_origins = %(allowed_origins)s, rules = %(rules)s,
        spam_threshold = %(spam_threshold)s, challenge_provider = %(challenge_provider)s,
        challenge_secret = %(challenge_secret)s, redirect_url = %(redirect_url)s,
        created_at = %(created_at)s, uploads = %(uploads)s
    WHERE form_id = %(form_id)s
"""
_SELECT_FORM = """
    SELECT form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at, uploads
    FROM forms
"""
_GET_FORM = _SELECT_FORM + " WHERE form_id = %s"
_LIST_FORMS = _SELECT_FORM + " ORDER BY form_id"
_LIST_WORKSPACE_FORMS = _SELECT_FORM + " WHERE workspace_id = %s ORDER BY form_id"
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
_RESOLVE_PUBLIC_KEY = _SELECT_CONTEXT + " WHERE f.public_form_key = %s"
_RESOLVE_ID = _SELECT_CONTEXT + " WHERE f.form_id = %s"


class PostgresForms:
    def __init__(self, db: Database, cache: FormCache | None = None) -> None:
        self._db = db
        # Step 1's answers until a change (adapters/form_cache.py); None: always asked.
        self._cache = cache

    async def add(self, form: Form) -> None:
        await self._db.execute(_INSERT_FORM, ROWS.form_params(form))
        if self._cache is not None:
            self._cache.clear()

    async def get(self, form_id: str) -> Form | None:
        row = await self._db.fetch_one(_GET_FORM, (form_id,))
        return None if row is None else ROWS.form_from_row(row)

    async def update(self, form: Form) -> None:
        # The key is a column of the row, not a second index to keep: a rotated key is gone.
        await self._db.execute(_UPDATE_FORM, ROWS.form_params(form))
        if self._cache is not None:
            self._cache.clear()

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        rows = (
            await self._db.fetch_all(_LIST_FORMS)
            if workspace_id is None
            else await self._db.fetch_all(_LIST_WORKSPACE_FORMS, (workspace_id,))
        )
        return [ROWS.form_from_row(row) for row in rows]

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return await self._resolve(_RESOLVE_PUBLIC_KEY, "key:", public_form_key)

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return await self._resolve(_RESOLVE_ID, "id:", form_id)

    async def _resolve(self, query: str, kind: str, value: str) -> FormContext | None:
        cache = self._cache
        if cache is not None and (kept := cache.get(kind + value)) is not None:
            return kept
        ticket = 0 if cache is None else cache.ticket()
        row = await self._db.fetch_one(query, (value,))
        if row is None:
            return None
        context = FormContext(ROWS.form_from_row(row), ROWS.workspace_from_row(row, prefix="w_"))
        if cache is not None:
            cache.put(kind + value, context, public=kind == "key:", ticket=ticket)
        return context


# API keys

_INSERT_API_KEY = """
    INSERT INTO api_keys (key_id, workspace_id, key_hash, prefix, created_at, revoked_at)
    VALUES (%(key_id)s, %(workspace_id)s, %(key_hash)s, %(prefix)s, %(created_at)s,
        %(revoked_at)s)
"""
_SELECT_API_KEY = """
    SELECT key_id, workspace_id, key_hash, prefix, created_at, revoked_at FROM api_keys
"""
_FIND_API_KEY = _SELECT_API_KEY + " WHERE key_hash = %s"
_GET_API_KEY = _SELECT_API_KEY + " WHERE key_id = %s"
_LIST_API_KEYS = _SELECT_API_KEY + " WHERE workspace_id = %s ORDER BY created_at, key_id"
# COALESCE keeps the first revocation time when a key is revoked again.
_REVOKE_API_KEY = "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, %s) WHERE key_id = %s"


class PostgresApiKeys:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, key: ApiKey) -> None:
        await self._db.execute(_INSERT_API_KEY, ROWS.api_key_params(key))

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        row = await self._db.fetch_one(_FIND_API_KEY, (key_hash,))
        return None if row is None else ROWS.api_key_from_row(row)

    async def get(self, key_id: str) -> ApiKey | None:
        row = await self._db.fetch_one(_GET_API_KEY, (key_id,))
        return None if row is None else ROWS.api_key_from_row(row)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        return await self._db.execute(_REVOKE_API_KEY, (m.moment(when), key_id)) > 0

    async def list(self, workspace_id: str) -> list[ApiKey]:
        rows = await self._db.fetch_all(_LIST_API_KEYS, (workspace_id,))
        return [ROWS.api_key_from_row(row) for row in rows]
