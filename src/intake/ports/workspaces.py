from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from attrs import frozen

from intake.domain.model import Workspace


@frozen
class FormUsage:
    """One form's month: the submissions charged to its workspace's quota in it (those
    still stored: an erased one no longer counts), and its filled honeypots."""

    form_id: str
    used: int
    honeypot_hits: int


@frozen
class FormStatusCounts:
    """One form's submissions received in a span of time, by the status they have now
    (what the dashboard's list of forms shows for the month)."""

    form_id: str
    accepted: int = 0
    spam: int = 0
    unverified: int = 0


@frozen
class WorkspaceSetup:
    """How far a workspace's owner has come in setting it up (the dashboard's first-steps
    checklist): it has a form, one of its forms has received a submission, and one has
    a destination (a webhook endpoint, a mail recipient or a chat destination)."""

    has_form: bool
    has_submission: bool
    has_destination: bool


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

    async def form_usage(self, workspace_id: str, period: str) -> Sequence[FormUsage]:
        """Every form of the workspace, by form id, with its submissions charged in the
        period (`YYYY-MM`: their `charged_period`) and its honeypot hits on the period's
        days; one query, whatever the number of forms."""
        ...

    async def status_counts(
        self, workspace_id: str, since: datetime, until: datetime
    ) -> Sequence[FormStatusCounts]:
        """Every form of the workspace, by form id, with its submissions received in
        [since, until) by status; one query, whatever the number of forms."""
        ...

    async def setup(self, workspace_id: str) -> WorkspaceSetup:
        """The workspace's setup (WorkspaceSetup), its deleted forms left out: one query."""
        ...

    async def storage_used(self, workspace_id: str) -> int:
        """Bytes of files the workspace's stored submissions hold, whatever their
        status: what CommitPlan.storage_limit is checked against."""
        ...
