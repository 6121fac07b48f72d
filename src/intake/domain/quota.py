"""Monthly quota ceilings (spec part 8, decisions.md "Quota")."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from attrs import frozen

from intake.domain.model import Plan, Workspace


@frozen
class PlanTerms:
    monthly_limit: int
    overage: bool


DEFAULT_PLANS: Mapping[Plan, PlanTerms] = {
    Plan.FREE: PlanTerms(monthly_limit=50, overage=False),
    Plan.STARTER: PlanTerms(monthly_limit=1_000, overage=True),
    Plan.BUSINESS: PlanTerms(monthly_limit=10_000, overage=True),
}


# The most bytes of files one workspace may keep, whatever their submissions' status.
DEFAULT_STORAGE_LIMIT = 1 << 30  # 1 GiB
# Days spam and unverified submissions are kept before `intake purge` erases them.
DEFAULT_SPAM_RETENTION_DAYS = 30


def monthly_limit(workspace: Workspace, plans: Mapping[Plan, PlanTerms] = DEFAULT_PLANS) -> int:
    """The workspace's monthly limit: its own, else its plan's."""
    if workspace.monthly_limit is not None:
        return workspace.monthly_limit
    return plans[workspace.plan].monthly_limit


def ceiling(workspace: Workspace, plans: Mapping[Plan, PlanTerms] = DEFAULT_PLANS) -> int:
    """The most accepted submissions the workspace may have in one calendar month."""
    limit = monthly_limit(workspace, plans)
    return limit * 2 if plans[workspace.plan].overage else limit


def storage_ceiling(workspace: Workspace, default: int = DEFAULT_STORAGE_LIMIT) -> int:
    """The most bytes of files the workspace may keep: its own limit, else `default`."""
    return workspace.storage_limit if workspace.storage_limit is not None else default


def month_span(moment: datetime) -> tuple[datetime, datetime]:
    """The calendar month in UTC that a moment falls in, as [first instant, next month's)."""
    utc = moment.astimezone(UTC)
    start = datetime(utc.year, utc.month, 1, tzinfo=UTC)
    following = datetime(utc.year + utc.month // 12, utc.month % 12 + 1, 1, tzinfo=UTC)
    return start, following


def period(moment: datetime) -> str:
    """The quota period a moment falls in: its calendar month in UTC, as `YYYY-MM`."""
    utc = moment.astimezone(UTC)
    return f"{utc.year:04d}-{utc.month:02d}"
