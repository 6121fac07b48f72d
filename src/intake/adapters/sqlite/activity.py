"""Each form's counts day by day (ActivityRepository), in one statement."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.worker import Worker
from intake.domain.activity import DayCounts, DayGrid

# The grid's days come as a JSON list of [start, end) pairs in the stored time text; each
# day is a range of submissions_form_created per form; the dead deliveries of the whole
# span are one range of deliveries_dead, joined to the outbox for their form; then one
# row per form and day.
_DAILY_COUNTS = """
    WITH days (day, start_at, end_at) AS (
        SELECT CAST(key AS INTEGER), json_extract(value, '$[0]'), json_extract(value, '$[1]')
        FROM json_each(:days)
    ),
    counted (form_id, day, what) AS (
        SELECT s.form_id, d.day, s.status
        FROM days AS d JOIN submissions AS s
            ON s.form_id IN (SELECT value FROM json_each(:form_ids))
            AND s.created_at >= d.start_at AND s.created_at < d.end_at
        UNION ALL
        SELECT o.form_id, d.day, 'failed'
        FROM deliveries AS dl CROSS JOIN days AS d  -- dl first: one range of deliveries_dead
        JOIN outbox AS o ON o.event_id = dl.event_id
        WHERE dl.state = 'dead' AND dl.created_at >= :since AND dl.created_at < :until
            AND dl.created_at >= d.start_at AND dl.created_at < d.end_at
            AND o.form_id IN (SELECT value FROM json_each(:form_ids))
    )
    SELECT form_id, day,
        sum(what = 'accepted') AS accepted,
        sum(what = 'spam') AS spam,
        sum(what = 'unverified') AS unverified,
        sum(what = 'failed') AS failed
    FROM counted
    GROUP BY form_id, day
    ORDER BY form_id, day
"""


def _daily_counts(
    conn: sqlite3.Connection, form_ids: Sequence[str], grid: DayGrid
) -> list[DayCounts]:
    days = [
        [mapping.time_text(start), mapping.time_text(end)]
        for start, end in zip(grid.starts, grid.ends, strict=True)
    ]
    params = {
        "days": json.dumps(days),
        "form_ids": json.dumps(list(form_ids)),
        "since": days[0][0],
        "until": days[-1][1],
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
        for row in conn.execute(_DAILY_COUNTS, params)
    ]


class SqliteActivity:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def daily_counts(self, form_ids: Sequence[str], grid: DayGrid) -> Sequence[DayCounts]:
        if not form_ids or not grid.days:
            return []
        return await self._worker.run(_daily_counts, form_ids, grid)
