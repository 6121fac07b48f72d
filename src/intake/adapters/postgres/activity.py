"""Each form's counts day by day (ActivityRepository), in one statement."""

from __future__ import annotations

from collections.abc import Sequence

from intake.adapters.postgres.database import Database
from intake.domain.activity import DayCounts, DayGrid

# Each form's day is one range of submissions_form_created, whose entries hold the status
# (migration 0022): read alone, never the rows, and counted as it is read, with no sort or
# hash of 100,000 rows on a large form. The dead deliveries of the whole span are one
# range of their partial index deliveries_dead, joined to the outbox for their form and
# given their day by the grid's starts (width_bucket: 1 for the first day). One row per
# form and day with something.
_DAILY_COUNTS = """
    WITH days AS (
        SELECT d.since, d.until, d.day - 1 AS day
        FROM unnest(%(starts)s::timestamptz[], %(ends)s::timestamptz[])
            WITH ORDINALITY AS d(since, until, day)
    ),
    received AS (
        SELECT f.form_id, days.day, c.accepted, c.spam, c.unverified
        FROM (SELECT DISTINCT unnest(%(form_ids)s::text[]) AS form_id) AS f
        CROSS JOIN days
        CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE s.status = 'accepted')::integer AS accepted,
                count(*) FILTER (WHERE s.status = 'spam')::integer AS spam,
                count(*) FILTER (WHERE s.status = 'unverified')::integer AS unverified
            FROM submissions AS s
            WHERE s.form_id = f.form_id
                AND s.created_at >= days.since AND s.created_at < days.until
        ) AS c
        WHERE c.accepted + c.spam + c.unverified > 0
    ),
    failed AS (
        SELECT o.form_id, width_bucket(d.created_at, %(starts)s::timestamptz[]) - 1 AS day,
            count(*)::integer AS failed
        FROM deliveries AS d JOIN outbox AS o ON o.event_id = d.event_id
        WHERE d.state = 'dead' AND d.created_at >= %(since)s AND d.created_at < %(until)s
            AND o.form_id = ANY (%(form_ids)s)
        GROUP BY 1, 2
    )
    SELECT coalesce(r.form_id, x.form_id) AS form_id, coalesce(r.day, x.day) AS day,
        coalesce(r.accepted, 0) AS accepted, coalesce(r.spam, 0) AS spam,
        coalesce(r.unverified, 0) AS unverified, coalesce(x.failed, 0) AS failed
    FROM received AS r FULL JOIN failed AS x ON x.form_id = r.form_id AND x.day = r.day
    ORDER BY 1, 2
"""


class PostgresActivity:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def daily_counts(self, form_ids: Sequence[str], grid: DayGrid) -> Sequence[DayCounts]:
        if not form_ids or not grid.days:
            return []
        params = {
            "form_ids": list(form_ids),
            "starts": list(grid.starts),
            "ends": list(grid.ends),
            "since": grid.starts[0],
            "until": grid.end,
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
            for row in await self._db.fetch_all(_DAILY_COUNTS, params)
        ]
