from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from intake.domain.model import Workspace


class WorkspaceRepository(Protocol):
    async def add(self, workspace: Workspace) -> None: ...

    async def get(self, workspace_id: str) -> Workspace | None: ...

    async def update(self, workspace: Workspace) -> None: ...

    async def list(self) -> list[Workspace]: ...

    async def usage(self, workspace_id: str, period: str) -> int:
        """Accepted submissions counted against the quota in a period (`YYYY-MM`)."""
        ...

    async def usage_in_period(self, period: str) -> Sequence[tuple[Workspace, int]]:
        """Read only: every workspace with submissions counted against its quota in the
        period, with that count, by workspace id; one query, whatever their number."""
        ...

    async def storage_used(self, workspace_id: str) -> int:
        """Bytes of files the workspace's stored submissions hold, whatever their
        status: what CommitPlan.storage_limit is checked against."""
        ...
