"""Each form's month, on every store: the submissions charged to its workspace's quota
in a period (accepted when stored, by the month of their creation in UTC; never spam or
unverified ones), and its filled honeypots on the period's days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from intake.domain.model import SubmissionStatus
from intake.ports.store import Store
from intake.ports.submissions import Committed, HoneypotHit
from intake.ports.workspaces import FormStatusCounts, FormUsage
from tests.contract.builders import (
    FORM_ID,
    WORKSPACE_ID,
    form,
    plan,
    quota,
    seed,
    submission,
)

pytestmark = pytest.mark.anyio

OTHER_FORM = "frm_2"
OTHER_WORKSPACE = "ws_2"
STRANGER_FORM = "frm_3"
JANUARY = datetime(2026, 1, 20, 9, 0, tzinfo=UTC)
FEBRUARY = datetime(2026, 2, 3, 9, 0, tzinfo=UTC)


async def _commit(
    store: Store,
    n: int,
    *,
    form_id: str = FORM_ID,
    workspace_id: str = WORKSPACE_ID,
    status: SubmissionStatus = SubmissionStatus.ACCEPTED,
    at: datetime = JANUARY,
) -> None:
    sub = submission(
        n,
        form_id=form_id,
        workspace_id=workspace_id,
        status=status,
        created_at=at + timedelta(seconds=n),
    )
    period = f"{at.astimezone(UTC):%Y-%m}"
    charge = quota(1_000, workspace_id, period) if status.uses_quota else None
    assert await store.submissions.commit(plan(sub, charge=charge)) == Committed()


async def _hit(store: Store, form_id: str, day: str) -> None:
    result = await store.submissions.record_honeypot(HoneypotHit(form_id, day, None))
    assert result == Committed()


async def _seed(store: Store) -> None:
    await seed(
        store,
        form(),
        form(OTHER_FORM, public_form_key="pk0form2"),
        form(STRANGER_FORM, OTHER_WORKSPACE, public_form_key="pk0form3"),
    )


async def test_each_form_counts_its_charged_submissions_and_honeypot_hits(
    store: Store,
) -> None:
    await _seed(store)
    for n in range(3):
        await _commit(store, n)
    await _commit(store, 10, form_id=OTHER_FORM)
    await _commit(store, 11, status=SubmissionStatus.SPAM)
    await _commit(store, 12, status=SubmissionStatus.UNVERIFIED)
    await _commit(store, 13, at=FEBRUARY)
    await _commit(store, 20, form_id=STRANGER_FORM, workspace_id=OTHER_WORKSPACE)
    for day in ("2026-01-01", "2026-01-15", "2026-01-31", "2026-02-01", "2025-12-31"):
        await _hit(store, FORM_ID, day)
    await _hit(store, STRANGER_FORM, "2026-01-15")

    january = await store.workspaces.form_usage(WORKSPACE_ID, "2026-01")
    february = await store.workspaces.form_usage(WORKSPACE_ID, "2026-02")

    assert list(january) == [FormUsage(FORM_ID, 3, 3), FormUsage(OTHER_FORM, 1, 0)]
    assert list(february) == [FormUsage(FORM_ID, 1, 1), FormUsage(OTHER_FORM, 0, 0)]
    # The per-form counts add up to the workspace's month.
    assert sum(f.used for f in january) == await store.workspaces.usage(WORKSPACE_ID, "2026-01")
    assert list(await store.workspaces.form_usage(OTHER_WORKSPACE, "2026-01")) == [
        FormUsage(STRANGER_FORM, 1, 1)
    ]


async def test_a_charge_falls_in_the_month_of_its_creation_in_utc(store: Store) -> None:
    await _seed(store)
    # 23:30 on January 31st in New York is February 1st in UTC.
    new_york = timezone(timedelta(hours=-5))
    await _commit(store, 1, at=datetime(2026, 1, 31, 23, 30, tzinfo=new_york))

    january = await store.workspaces.form_usage(WORKSPACE_ID, "2026-01")
    february = await store.workspaces.form_usage(WORKSPACE_ID, "2026-02")

    assert [f.used for f in january] == [0, 0]
    assert [f.used for f in february] == [1, 0]


async def test_a_workspace_without_forms_has_no_form_usage(store: Store) -> None:
    await _seed(store)

    assert list(await store.workspaces.form_usage("ws_none", "2026-01")) == []
    assert list(await store.workspaces.form_usage(WORKSPACE_ID, "2026-01")) == [
        FormUsage(FORM_ID, 0, 0),
        FormUsage(OTHER_FORM, 0, 0),
    ]


async def test_status_counts_take_what_came_in_the_span_by_status_now(store: Store) -> None:
    await _seed(store)
    for n in range(2):
        await _commit(store, n)
    await _commit(store, 3, status=SubmissionStatus.SPAM)
    for n in (4, 5, 6):
        await _commit(store, n, status=SubmissionStatus.UNVERIFIED)
    await _commit(store, 7, form_id=OTHER_FORM, status=SubmissionStatus.SPAM)
    await _commit(store, 8, at=FEBRUARY)  # after the span
    await _commit(store, 9, at=JANUARY - timedelta(days=30))  # before it
    await _commit(store, 20, form_id=STRANGER_FORM, workspace_id=OTHER_WORKSPACE)
    since, until = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC)

    counts = await store.workspaces.status_counts(WORKSPACE_ID, since, until)

    assert list(counts) == [
        FormStatusCounts(FORM_ID, accepted=2, spam=1, unverified=3),
        FormStatusCounts(OTHER_FORM, accepted=0, spam=1, unverified=0),
    ]
    # A span holds its first instant, not its end.
    await _commit(store, 30, at=until - timedelta(seconds=30))  # created at `until` exactly
    again = await store.workspaces.status_counts(WORKSPACE_ID, since, until)
    after = await store.workspaces.status_counts(WORKSPACE_ID, until, FEBRUARY)
    assert [c.accepted for c in again] == [2, 0]
    assert [c.accepted for c in after] == [1, 0]
    assert list(await store.workspaces.status_counts("ws_none", since, until)) == []
