"""Monthly quota: the ceiling of each plan, a workspace's own limit, the UTC month."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from intake.domain.model import Plan, Workspace
from intake.domain.quota import DEFAULT_PLANS, PlanTerms, ceiling, period


def workspace(plan: Plan, monthly_limit: int | None = None) -> Workspace:
    return Workspace(workspace_id="ws_1", name="Acme", plan=plan, monthly_limit=monthly_limit)


@pytest.mark.parametrize(
    ("plan", "expected"), [(Plan.FREE, 50), (Plan.STARTER, 2_000), (Plan.BUSINESS, 20_000)]
)
def test_each_plan_has_its_decided_ceiling(plan: Plan, expected: int) -> None:
    assert ceiling(workspace(plan)) == expected


def test_the_free_plan_has_no_overage_and_the_paid_plans_do() -> None:
    assert DEFAULT_PLANS[Plan.FREE] == PlanTerms(monthly_limit=50, overage=False)
    assert DEFAULT_PLANS[Plan.STARTER] == PlanTerms(monthly_limit=1_000, overage=True)
    assert DEFAULT_PLANS[Plan.BUSINESS] == PlanTerms(monthly_limit=10_000, overage=True)


def test_a_workspaces_own_limit_is_the_ceiling_on_the_free_plan() -> None:
    assert ceiling(workspace(Plan.FREE, monthly_limit=10)) == 10
    assert ceiling(workspace(Plan.FREE, monthly_limit=500)) == 500


@pytest.mark.parametrize("plan", [Plan.STARTER, Plan.BUSINESS])
def test_a_workspaces_own_limit_is_doubled_on_a_paid_plan_with_overage(plan: Plan) -> None:
    assert ceiling(workspace(plan, monthly_limit=300)) == 600


def test_a_limit_of_zero_is_a_ceiling_of_zero() -> None:
    assert ceiling(workspace(Plan.STARTER, monthly_limit=0)) == 0


def test_configured_plan_terms_replace_the_defaults() -> None:
    plans = {**DEFAULT_PLANS, Plan.FREE: PlanTerms(monthly_limit=75, overage=False)}

    assert ceiling(workspace(Plan.FREE), plans) == 75


def test_the_period_is_the_utc_calendar_month() -> None:
    assert period(datetime(2025, 1, 31, 23, 59, 59, tzinfo=UTC)) == "2025-01"
    assert period(datetime(2025, 2, 1, 0, 0, tzinfo=UTC)) == "2025-02"
    assert period(datetime(2025, 12, 31, 23, 59, tzinfo=UTC)) == "2025-12"
    assert period(datetime(2026, 1, 1, tzinfo=UTC)) == "2026-01"


def test_a_moment_east_of_utc_just_after_local_midnight_is_still_last_month_in_utc() -> None:
    berlin_summer = timezone(timedelta(hours=2))

    assert period(datetime(2025, 7, 1, 0, 30, tzinfo=berlin_summer)) == "2025-06"


def test_a_moment_west_of_utc_just_before_local_midnight_is_already_next_month_in_utc() -> None:
    new_york_winter = timezone(timedelta(hours=-5))

    assert period(datetime(2025, 12, 31, 22, 0, tzinfo=new_york_winter)) == "2026-01"
