"""Workspace management: creating, finding, changing and metering workspaces."""

from __future__ import annotations

from datetime import datetime

from attrs import evolve, frozen

from intake.domain.model import Plan, Workspace
from intake.domain.quota import ceiling, month_span, monthly_limit, period
from intake.ports.workspaces import FormStatusCounts, FormUsage, WorkspaceSetup
from intake.service.admin.base import AdminBase
from intake.service.admin.changes import WorkspaceChanges
from intake.service.admin.errors import AdminError, NotFoundError, WorkspaceSuspended
from intake.service.admin.inputs import check_storage_limit


@frozen
class WorkspaceUsage:
    workspace: Workspace
    period: str
    used: int
    ceiling: int
    storage_used: int = 0  # bytes of files its submissions keep, whatever their status
    limit: int = 0  # its monthly limit (its own, else its plan's); `ceiling` adds overage
    forms: tuple[FormUsage, ...] = ()  # every form's share of `used`, by form id


@frozen
class MonthCounts:
    since: datetime  # the month's first instant
    forms: dict[str, FormStatusCounts]  # by form id


class WorkspaceAdmin(AdminBase):
    async def create_workspace(
        self,
        name: str,
        plan: Plan = Plan.FREE,
        monthly_limit: int | None = None,
        *,
        storage_limit: int | None = None,
    ) -> Workspace:
        if monthly_limit is not None and monthly_limit < 0:
            raise AdminError("a monthly limit cannot be negative")
        check_storage_limit(storage_limit)
        workspace = Workspace(
            workspace_id=self._id("ws"),
            name=name,
            plan=plan,
            monthly_limit=monthly_limit,
            active=True,
            created_at=self._clock.now(),
            storage_limit=storage_limit,
        )
        await self._store.workspaces.add(workspace)
        return workspace

    async def workspace(self, workspace_id: str) -> Workspace:
        workspace = await self._store.workspaces.get(workspace_id)
        if workspace is None:
            raise NotFoundError(f"no workspace {workspace_id!r}")
        return workspace

    async def acting_workspace(self, workspace_id: str) -> Workspace:
        """The workspace, when its owners may change or send something in it: a
        suspended one changes nothing and sends nothing (WorkspaceSuspended), though its
        owners may still read what it holds. The one rule every owner-side door applies
        (the management API, the dashboard); the operator's `intake` is not held by it."""
        workspace = await self.workspace(workspace_id)
        if not workspace.active:
            raise WorkspaceSuspended(workspace_id)
        return workspace

    async def workspaces(self) -> list[Workspace]:
        return await self._store.workspaces.list()

    async def set_workspace_active(self, workspace_id: str, active: bool) -> Workspace:
        workspace = evolve(await self.workspace(workspace_id), active=active)
        await self._store.workspaces.update(workspace)
        return workspace

    async def update_workspace(self, workspace_id: str, changes: WorkspaceChanges) -> Workspace:
        workspace = changes.apply(await self.workspace(workspace_id))
        await self._store.workspaces.update(workspace)
        return workspace

    async def setup(self, workspace_id: str) -> WorkspaceSetup:
        """How far the workspace is set up (the dashboard's first steps), in one query."""
        return await self._store.workspaces.setup(workspace_id)

    async def month_counts(self, workspace_id: str) -> MonthCounts:
        """Each form's submissions received this calendar month (UTC), by status now."""
        since, until = month_span(self._clock.now())
        counts = await self._store.workspaces.status_counts(workspace_id, since, until)
        return MonthCounts(since, {entry.form_id: entry for entry in counts})

    async def usage(self, workspace_id: str) -> WorkspaceUsage:
        workspace = await self.workspace(workspace_id)
        month = period(self._clock.now())
        used = await self._store.workspaces.usage(workspace_id, month)
        storage = await self._store.workspaces.storage_used(workspace_id)
        forms = await self._store.workspaces.form_usage(workspace_id, month)
        return WorkspaceUsage(
            workspace,
            month,
            used,
            ceiling(workspace, self._plans),
            storage,
            limit=monthly_limit(workspace, self._plans),
            forms=tuple(forms),
        )
