"""The forms repository, for both SQL stores. The submission path's lookups go through
the store's form cache (adapters/form_cache.py), which each store keeps its own way:
SQLite for a short while, PostgreSQL until a change is announced."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from intake.adapters import sql_statements as sql
from intake.adapters.form_cache import FORM_ID, PUBLIC_KEY, FormCache
from intake.adapters.sealed_columns import opened_context, opened_form, sealed_form
from intake.adapters.sql.executor import Executor, Transaction
from intake.domain.model import Form
from intake.ports.forms import FormContext
from intake.ports.sealer import Sealer

# PostgreSQL: the form's row locked first, so two removals at once take turns and the
# second finds nothing to remove (SQLite's transaction holds the write lock already).
_LOCK_FORM = "SELECT 1 FROM forms WHERE form_id = ? FOR UPDATE"


class SqlForms:
    def __init__(self, ex: Executor, sealer: Sealer, cache: FormCache | None = None) -> None:
        self._ex = ex
        self._sealer = sealer
        # Step 1's answers, for a while (adapters/form_cache.py); None: always asked.
        self._cache = cache

    def _changed(self) -> None:
        if self._cache is not None:
            self._cache.clear()

    async def add(self, form: Form) -> None:
        params = self._ex.rows.form_params(sealed_form(form, self._sealer))
        await self._ex.execute(sql.INSERT_FORM, params)
        self._changed()

    async def get(self, form_id: str) -> Form | None:
        row = await self._ex.fetch_one(sql.GET_FORM, (form_id,))
        return None if row is None else opened_form(self._ex.rows.form_from_row(row), self._sealer)

    async def update(self, form: Form) -> None:
        # The key is a column of the row, not a second index to keep: a rotated key is gone.
        params = self._ex.rows.form_params(sealed_form(form, self._sealer))
        await self._ex.execute(sql.UPDATE_FORM, params)
        self._changed()

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        rows = await (
            self._ex.fetch_all(sql.LIST_FORMS)
            if workspace_id is None
            else self._ex.fetch_all(sql.LIST_WORKSPACE_FORMS, (workspace_id,))
        )
        return [opened_form(self._ex.rows.form_from_row(row), self._sealer) for row in rows]

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return await self._resolve(sql.RESOLVE_PUBLIC_KEY, PUBLIC_KEY, public_form_key)

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return await self._resolve(sql.RESOLVE_ID, FORM_ID, form_id)

    async def _resolve(self, statement: str, kind: str, value: str) -> FormContext | None:
        async def ask() -> FormContext | None:
            row = await self._ex.fetch_one(statement, (value,))
            if row is None:
                return None
            rows = self._ex.rows
            found = FormContext(rows.form_from_row(row), rows.workspace_from_row(row, prefix="w_"))
            # Opened before the cache keeps it: a submission does not decrypt again.
            return opened_context(found, self._sealer)

        if self._cache is None:
            return await ask()
        return await self._cache.lookup(kind, value, ask)

    async def mark_deleted(self, form_id: str, at: datetime) -> bool:
        codec = self._ex.rows.codec
        params = (codec.time(at), codec.boolean(False), form_id)
        marked = await self._ex.execute(sql.MARK_FORM_DELETED, params) > 0
        self._changed()
        return marked

    async def deleted(self, after: str, limit: int) -> Sequence[str]:
        rows = await self._ex.fetch_all(sql.DELETED_FORMS, (after, limit))
        return [row["form_id"] for row in rows]

    async def remove_deleted(self, form_id: str) -> bool:
        return await self._ex.transaction(_remove_deleted, form_id)


async def _remove_deleted(tx: Transaction, form_id: str) -> bool:
    # Nothing is committed for the form between the check and the removal.
    if tx.locks_rows:
        await tx.execute(_LOCK_FORM, (form_id,))
    if await tx.fetch_one(sql.FORM_REMOVABLE, (form_id,)) is None:
        tx.discard()
        return False
    await tx.execute(sql.REMOVE_FORM_HONEYPOT_HITS, (form_id,))
    await tx.execute(sql.REMOVE_FORM, (form_id,))
    return True
