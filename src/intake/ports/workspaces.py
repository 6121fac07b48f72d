from __future__ import annotations

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
