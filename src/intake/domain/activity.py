"""A form's activity day by day: the local days of one time zone, each as the instants it
spans, and the counts of submissions by status and of failed deliveries on each (the
dashboard's charts, docs/dashboard.md#charts)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from attrs import field, frozen


@frozen
class DayGrid:
    """Consecutive local days of one time zone: day i spans [starts[i], starts[i + 1]),
    the last [starts[-1], end), in UTC. A day is as long as its time zone makes it: 23
    or 25 hours across a daylight-saving change."""

    days: tuple[date, ...]
    starts: tuple[datetime, ...]  # in UTC, ascending
    end: datetime

    @classmethod
    def ending_today(cls, now: datetime, count: int, zone: ZoneInfo) -> DayGrid:
        """The `count` local days up to and including the one `now` falls on."""
        today = now.astimezone(zone).date()
        days = tuple(today - timedelta(days=back) for back in range(count - 1, -1, -1))
        return cls(days, tuple(_start(day, zone) for day in days), _start(today + _DAY, zone))

    @property
    def ends(self) -> tuple[datetime, ...]:
        """Where each day ends: the next day's start, the last day's `end`."""
        return (*self.starts[1:], self.end)


_DAY = timedelta(days=1)


def _start(day: date, zone: ZoneInfo) -> datetime:
    # A midnight that does not exist (clocks jumping from 00:00) is read with the offset
    # before the change, which is the instant the day begins; a midnight that happens
    # twice begins at its first.
    return datetime.combine(day, time(), tzinfo=zone).astimezone(UTC)


@frozen
class DayCounts:
    """One form's count on one day of a grid: its submissions received that day by the
    status they have now, and the deliveries of its events made that day that are dead
    (every attempt failed: not delivered, until retried)."""

    form_id: str
    day: int  # the day's place in the grid
    accepted: int = 0
    spam: int = 0
    unverified: int = 0
    failed: int = 0

    @property
    def flagged(self) -> int:
        """Submissions held back from delivery: spam and unverified."""
        return self.spam + self.unverified


@frozen
class Activity:
    """One form's counts on every day of a grid, a day with nothing as zeros."""

    grid: DayGrid
    counts: tuple[DayCounts, ...] = field()

    @property
    def accepted(self) -> int:
        return sum(day.accepted for day in self.counts)

    @property
    def flagged(self) -> int:
        return sum(day.flagged for day in self.counts)

    @property
    def failed(self) -> int:
        return sum(day.failed for day in self.counts)

    @property
    def spam_share(self) -> float | None:
        """The share of the submissions received that were flagged; None with none."""
        received = self.accepted + self.flagged
        return self.flagged / received if received else None

    def busiest(self) -> tuple[date, int] | None:
        """The day with the most submissions (the earliest of equals); None with none."""
        best = max(self.counts, key=lambda day: day.accepted + day.flagged, default=None)
        if best is None or best.accepted + best.flagged == 0:
            return None
        return self.grid.days[best.day], best.accepted + best.flagged


def activities(
    form_ids: Sequence[str], grid: DayGrid, rows: Iterable[DayCounts]
) -> dict[str, Activity]:
    """Each form's activity from a store's rows (the days with something), by form id."""
    found = {(row.form_id, row.day): row for row in rows}
    return {
        form_id: Activity(
            grid,
            tuple(
                found.get((form_id, day), DayCounts(form_id, day)) for day in range(len(grid.days))
            ),
        )
        for form_id in form_ids
    }
