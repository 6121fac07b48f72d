"""Each form's counts day by day (ActivityRepository), in one statement. Each store
writes that statement its own way: SQLite is handed the lists as JSON, PostgreSQL as
arrays, and each counts in the order its own indexes serve best."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attrs import frozen

from intake.adapters.sql.executor import Executor
from intake.domain.activity import DayCounts, DayGrid


@frozen
class ActivityStatement:
    # :form_ids, :starts, :ends (the grid's days, in order), each a list as `listed` makes
    # it, and :since, :until (the grid's span) -> form_id, day (its place in the grid),
    # accepted, spam, unverified, failed: one row per form and day with something.
    daily_counts: str
    listed: Callable[[list[object]], object]


class SqlActivity:
    def __init__(self, ex: Executor, statement: ActivityStatement) -> None:
        self._ex = ex
        self._statement = statement

    async def daily_counts(self, form_ids: Sequence[str], grid: DayGrid) -> Sequence[DayCounts]:
        if not form_ids or not grid.days:
            return []
        time, listed = self._ex.rows.codec.time, self._statement.listed
        params = {
            "form_ids": listed(list(form_ids)),
            "starts": listed([time(start) for start in grid.starts]),
            "ends": listed([time(end) for end in grid.ends]),
            "since": time(grid.starts[0]),
            "until": time(grid.end),
        }
        return [
            DayCounts(
                row["form_id"],
                row["day"],
                row["accepted"],
                row["spam"],
                row["unverified"],
                row["failed"],
            )
            for row in await self._ex.fetch_all(self._statement.daily_counts, params)
        ]
