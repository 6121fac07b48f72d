"""Forms' activity day by day, for the dashboard's charts (domain/activity.py)."""

from __future__ import annotations

from collections.abc import Sequence
from zoneinfo import ZoneInfo

from intake.domain.activity import Activity, DayGrid, activities
from intake.ports.clock import Clock
from intake.ports.store import Store


class ActivityCounts:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def daily(
        self, form_ids: Sequence[str], days: int, zone: ZoneInfo
    ) -> dict[str, Activity]:
        """Each form's counts on the last `days` days of `zone`, today included, by form
        id: one query for every form. The caller has found the forms its user's."""
        grid = DayGrid.ending_today(self._clock.now(), days, zone)
        rows = await self._store.activity.daily_counts(form_ids, grid) if form_ids else []
        return activities(form_ids, grid, rows)
