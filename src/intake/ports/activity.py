"""What the dashboard's charts read: each form's counts day by day (domain/activity.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from intake.domain.activity import DayCounts, DayGrid


class ActivityRepository(Protocol):
    async def daily_counts(self, form_ids: Sequence[str], grid: DayGrid) -> Sequence[DayCounts]:
        """For each of the forms, each day of the grid with something to count: its
        submissions received that day (created_at in the day's span) by the status they
        have now, and the deliveries of its events made that day that are dead. A day
        with nothing has no row. One query, whatever the number of forms and days."""
        ...
