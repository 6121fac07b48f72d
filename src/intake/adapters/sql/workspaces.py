"""The workspaces and API keys repositories, for both SQL stores. The statements are
shared (adapters/sql_statements.py) but for the month's usage and the status counts,
which each store reads its own way and hands in."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from attrs import frozen

from intake.adapters import sql_statements as sql
from intake.adapters.form_cache import FormCache
from intake.adapters.sql.executor import Executor
from intake.domain.model import ApiKey, Workspace
from intake.ports.workspaces import FormStatusCounts, FormUsage, WorkspaceSetup


@frozen
class UsageStatements:
    """What a store counts its own way: SQLite one row a month, PostgreSQL shards."""

    # (workspace_id, period) -> one row with `count`, or none.
    usage: str
    # :workspace_id, :since, :until -> form_id, accepted, spam, unverified.
    status_counts: str


class SqlWorkspaces:
    def __init__(
        self, ex: Executor, statements: UsageStatements, forms_cache: FormCache | None = None
    ) -> None:
        self._ex = ex
        self._statements = statements
        # The forms' kept lookups hold their workspace: a change here ends them.
        self._forms_cache = forms_cache

    async def add(self, workspace: Workspace) -> None:
        await self._ex.execute(sql.INSERT_WORKSPACE, self._ex.rows.workspace_params(workspace))

    async def get(self, workspace_id: str) -> Workspace | None:
        row = await self._ex.fetch_one(sql.GET_WORKSPACE, (workspace_id,))
        return None if row is None else self._ex.rows.workspace_from_row(row)

    async def update(self, workspace: Workspace) -> None:
        await self._ex.execute(sql.UPDATE_WORKSPACE, self._ex.rows.workspace_params(workspace))
        if self._forms_cache is not None:
            self._forms_cache.clear()

    async def list(self) -> list[Workspace]:
        rows = await self._ex.fetch_all(sql.LIST_WORKSPACES)
        return [self._ex.rows.workspace_from_row(row) for row in rows]

    async def usage(self, workspace_id: str, period: str) -> int:
        row = await self._ex.fetch_one(self._statements.usage, (workspace_id, period))
        return 0 if row is None else int(row["count"])

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        rows = await self._ex.fetch_all(sql.USAGE_IN_PERIOD, (period,))
        return [(self._ex.rows.workspace_from_row(row), int(row["count"])) for row in rows]

    async def form_usage(self, workspace_id: str, period: str) -> Sequence[FormUsage]:
        params = sql.form_usage_params(workspace_id, period)
        return [
            FormUsage(row["form_id"], int(row["used"]), int(row["honeypot_hits"]))
            for row in await self._ex.fetch_all(sql.FORM_USAGE, params)
        ]

    async def status_counts(
        self, workspace_id: str, since: datetime, until: datetime
    ) -> Sequence[FormStatusCounts]:
        time = self._ex.rows.codec.time
        span = {"workspace_id": workspace_id, "since": time(since), "until": time(until)}
        return [
            FormStatusCounts(row["form_id"], row["accepted"], row["spam"], row["unverified"])
            for row in await self._ex.fetch_all(self._statements.status_counts, span)
        ]

    async def storage_used(self, workspace_id: str) -> int:
        row = await self._ex.fetch_one(sql.STORAGE_USED, (workspace_id,))
        return 0 if row is None else int(row["bytes"])

    async def setup(self, workspace_id: str) -> WorkspaceSetup:
        row = await self._ex.fetch_one(sql.WORKSPACE_SETUP, {"workspace_id": workspace_id})
        assert row is not None  # a SELECT without FROM gives one row
        return WorkspaceSetup(
            bool(row["has_form"]), bool(row["has_submission"]), bool(row["has_destination"])
        )


class SqlApiKeys:
    def __init__(self, ex: Executor) -> None:
        self._ex = ex

    async def add(self, key: ApiKey) -> None:
        await self._ex.execute(sql.INSERT_API_KEY, self._ex.rows.api_key_params(key))

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        return await self._one(sql.FIND_API_KEY, key_hash)

    async def get(self, key_id: str) -> ApiKey | None:
        return await self._one(sql.GET_API_KEY, key_id)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        params = (self._ex.rows.codec.time(when), key_id)
        return await self._ex.execute(sql.REVOKE_API_KEY, params) > 0

    async def list(self, workspace_id: str) -> list[ApiKey]:
        rows = await self._ex.fetch_all(sql.LIST_API_KEYS, (workspace_id,))
        return [self._ex.rows.api_key_from_row(row) for row in rows]

    async def _one(self, statement: str, value: object) -> ApiKey | None:
        row = await self._ex.fetch_one(statement, (value,))
        return None if row is None else self._ex.rows.api_key_from_row(row)
