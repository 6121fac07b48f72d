"""Each form's counts day by day, in every store: the local days of a time zone, however
UTC cuts them (a daylight-saving change, a month's end), by the status a submission has
now, with the dead deliveries of its events; a day with nothing has no row."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from intake.domain.activity import DayCounts, DayGrid
from intake.domain.model import SubmissionStatus
from intake.ports.store import Store
from tests.contract.builders import endpoint, form, plan, seed, submission

pytestmark = pytest.mark.anyio

AUCKLAND = ZoneInfo("Pacific/Auckland")
LOS_ANGELES = ZoneInfo("America/Los_Angeles")
ACCEPTED, SPAM, UNVERIFIED = (
    SubmissionStatus.ACCEPTED,
    SubmissionStatus.SPAM,
    SubmissionStatus.UNVERIFIED,
)
LEASE = timedelta(minutes=5)
_NUMBERS = itertools.count()  # each submission an id of its own


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


async def received(
    store: Store, *arrivals: tuple[str, SubmissionStatus], form_id: str = "frm_1"
) -> None:
    for when, status in arrivals:
        sub = submission(next(_NUMBERS), form_id=form_id, status=status, created_at=at(when))
        assert type(await store.submissions.commit(plan(sub))).__name__ == "Committed"


async def test_a_local_day_counts_what_arrived_between_its_midnights(store: Store) -> None:
    await seed(store, form(), form("frm_2", public_form_key="pk2"))
    # Auckland is UTC+13 in March: its 1 April starts at 11:00 UTC on 31 March.
    await received(
        store,
        ("2026-03-31T23:59:59.999999+13:00", ACCEPTED),  # the last instant of 31 March
        ("2026-04-01T00:00:00+13:00", ACCEPTED),  # UTC: still 31 March, 11:00
        ("2026-04-01T09:30:00+13:00", SPAM),
        ("2026-04-01T23:00:00+13:00", UNVERIFIED),
        ("2026-04-02T00:00:00+13:00", ACCEPTED),  # the day after the grid
    )
    await received(store, ("2026-04-01T12:00:00+13:00", SPAM), form_id="frm_2")
    grid = DayGrid.ending_today(at("2026-04-01T15:00:00+13:00"), 2, AUCKLAND)
    assert grid.days == (date(2026, 3, 31), date(2026, 4, 1))

    counts = await store.activity.daily_counts(["frm_1"], grid)

    assert list(counts) == [
        DayCounts("frm_1", 0, accepted=1),
        DayCounts("frm_1", 1, accepted=1, spam=1, unverified=1),
    ]


async def test_a_day_of_23_hours_and_days_with_nothing(store: Store) -> None:
    await seed(store, form())
    # Los Angeles moves its clocks on 8 March 2026 at 02:00: that day lasts 23 hours.
    await received(
        store,
        ("2026-03-07T23:30:00-08:00", ACCEPTED),
        ("2026-03-08T00:30:00-08:00", SPAM),
        ("2026-03-08T23:30:00-07:00", ACCEPTED),  # UTC: 06:30 on 9 March
        ("2026-03-09T00:30:00-07:00", ACCEPTED),
    )
    grid = DayGrid.ending_today(at("2026-03-11T12:00:00-07:00"), 6, LOS_ANGELES)
    assert grid.starts[3] - grid.starts[2] == timedelta(hours=23)

    counts = await store.activity.daily_counts(["frm_1"], grid)

    by_day = {grid.days[row.day]: row for row in counts}
    assert set(by_day) == {date(2026, 3, 7), date(2026, 3, 8), date(2026, 3, 9)}
    assert (by_day[date(2026, 3, 7)].accepted, by_day[date(2026, 3, 7)].spam) == (1, 0)
    assert (by_day[date(2026, 3, 8)].accepted, by_day[date(2026, 3, 8)].spam) == (1, 1)
    assert by_day[date(2026, 3, 9)] == DayCounts("frm_1", 3, accepted=1)


async def test_several_forms_in_one_call_each_by_the_status_it_has_now(store: Store) -> None:
    await seed(
        store, form(), form("frm_2", public_form_key="pk2"), form("frm_3", public_form_key="pk3")
    )
    await received(store, ("2026-01-15T10:00:00+00:00", ACCEPTED))
    await received(store, ("2026-01-15T11:00:00+00:00", SPAM), form_id="frm_2")
    await received(store, ("2026-01-14T11:00:00+00:00", ACCEPTED), form_id="frm_3")
    grid = DayGrid.ending_today(at("2026-01-15T20:00:00+00:00"), 30, ZoneInfo("UTC"))

    counts = await store.activity.daily_counts(["frm_2", "frm_1"], grid)

    assert list(counts) == [
        DayCounts("frm_1", 29, accepted=1),
        DayCounts("frm_2", 29, spam=1),
    ]
    assert await store.activity.daily_counts([], grid) == []
    assert await store.activity.daily_counts(["frm_missing"], grid) == []


async def test_dead_deliveries_count_on_the_day_they_were_made(store: Store) -> None:
    await seed(store, form(), form("frm_2", public_form_key="pk2"))
    await store.destinations.add_endpoint(endpoint(created_at=at("2026-01-01T00:00:00+00:00")))
    await store.destinations.add_endpoint(
        endpoint("whk_2", form_id="frm_2", created_at=at("2026-01-01T00:00:00+00:00"))
    )
    days = ("2026-01-13T09:00:00+00:00", "2026-01-14T09:00:00+00:00", "2026-01-15T09:00:00+00:00")
    outcomes = ("dead", "retrying", "dead")
    for when, outcome in zip(days, outcomes, strict=True):
        for form_id in ("frm_1", "frm_2"):
            sub = submission(next(_NUMBERS), form_id=form_id, created_at=at(when))
            await store.submissions.commit(plan(sub))
        await store.deliveries.fan_out(at(when), 100)
        for claimed in (await store.deliveries.claim_due(at(when), LEASE, 10)).leased:
            again = None if outcome == "dead" else at(when) + timedelta(days=30)
            await store.deliveries.record_failure(
                claimed.delivery.delivery_id, at(when), "503", again
            )
    grid = DayGrid.ending_today(at("2026-01-15T20:00:00+00:00"), 3, ZoneInfo("UTC"))

    counts = await store.activity.daily_counts(["frm_1"], grid)

    assert list(counts) == [
        DayCounts("frm_1", 0, accepted=1, failed=1),
        DayCounts("frm_1", 1, accepted=1),
        DayCounts("frm_1", 2, accepted=1, failed=1),
    ]


async def test_a_day_with_a_dead_delivery_alone_and_a_form_named_twice(store: Store) -> None:
    await seed(store, form())
    await store.destinations.add_endpoint(endpoint(created_at=at("2026-01-01T00:00:00+00:00")))
    # Received before the grid; its delivery made, and dead, on the grid's first day.
    await received(store, ("2026-01-12T23:00:00+00:00", ACCEPTED))
    await store.deliveries.fan_out(at("2026-01-13T09:00:00+00:00"), 100)
    claimed = await store.deliveries.claim_due(at("2026-01-13T09:00:00+00:00"), LEASE, 10)
    for lease in claimed.leased:
        await store.deliveries.record_failure(
            lease.delivery.delivery_id, at("2026-01-13T09:00:00+00:00"), "503", None
        )
    await received(store, ("2026-01-14T10:00:00+00:00", SPAM))
    grid = DayGrid.ending_today(at("2026-01-14T20:00:00+00:00"), 2, ZoneInfo("UTC"))

    counts = await store.activity.daily_counts(["frm_1", "frm_1"], grid)

    assert list(counts) == [DayCounts("frm_1", 0, failed=1), DayCounts("frm_1", 1, spam=1)]
