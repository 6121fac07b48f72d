"""Workspace management: creating, finding, changing and metering workspaces, and the one
rule every owner-side door applies before it changes or sends anything (`acting`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from attrs import evolve, frozen

from intake.domain.model import Plan, Workspace
from intake.domain.quota import DEFAULT_PLANS, PlanTerms, ceiling, month_span, monthly_limit, period
from intake.ports.clock import Clock
from intake.ports.store import Store
from intake.ports.workspaces import (
    FormStatusCounts,
    FormUsage,
    WorkspaceRepository,
    WorkspaceSetup,
)
from intake.service.admin.changes import WorkspaceChanges
from intake.service.admin.errors import AdminError, NotFoundError, WorkspaceSuspended
from intake.service.admin.inputs import check_storage_limit
from intake.service.admin.mint import IdMint


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


async def existing_workspace(workspaces: WorkspaceRepository, workspace_id: str) -> Workspace:
    """The workspace; NotFoundError when there is none: the one answer every service
    gives for a workspace id it does not know."""
    workspace = await workspaces.get(workspace_id)
    if workspace is None:
        raise NotFoundError(f"no workspace {workspace_id!r}")
    return workspace


class Workspaces:
    """Workspaces, as the operator (`intake workspace`) and their owners see them."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        mint: IdMint,
        plans: Mapping[Plan, PlanTerms] = DEFAULT_PLANS,
    ) -> None:
        self._store = store
        self._clock = clock
        self._mint = mint
        self._plans = plans

    async def create(
        self,
        name: str,
        plan: Plan = Plan.FREE,
        monthly_limit: int | None = None,
        *,
        storage_limit: int | None = None,
    ) -> Workspace:
        """A new active workspace on `plan`; a limit None: the plan's."""
        if monthly_limit is not None and monthly_limit < 0:
            raise AdminError("a monthly limit cannot be negative")
        check_storage_limit(storage_limit)
        workspace = Workspace(
            workspace_id=self._mint.id("ws"),
            name=name,
            plan=plan,
            monthly_limit=monthly_limit,
            active=True,
            created_at=self._clock.now(),
            storage_limit=storage_limit,
        )
        await self._store.workspaces.add(workspace)
        return workspace

    async def get(self, workspace_id: str) -> Workspace:
        """The workspace; NotFoundError when there is none."""
        return await existing_workspace(self._store.workspaces, workspace_id)

    async def acting(self, workspace_id: str) -> Workspace:
        """The workspace, when its owners may change or send something in it: a
        suspended one changes nothing and sends nothing (WorkspaceSuspended), though its
        owners may still read what it holds. The one rule every owner-side door applies
        (the management API, the dashboard); the operator's `intake` is not held by it."""
        workspace = await self.get(workspace_id)
        if not workspace.active:
            raise WorkspaceSuspended(workspace_id)
        return workspace

    async def all(self) -> list[Workspace]:
        """Every workspace, the suspended ones too."""
        return await self._store.workspaces.list()

    async def set_active(self, workspace_id: str, active: bool) -> Workspace:
        """Suspends (False) or resumes (True) the workspace."""
        workspace = evolve(await self.get(workspace_id), active=active)
        await self._store.workspaces.update(workspace)
        return workspace

    async def update(self, workspace_id: str, changes: WorkspaceChanges) -> Workspace:
        """The workspace with `changes` (its plan and limits), saved."""
        workspace = changes.apply(await self.get(workspace_id))
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
        """This month's submissions counted against its limit, by form, and the bytes
        of files it keeps."""
        workspace = await self.get(workspace_id)
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
