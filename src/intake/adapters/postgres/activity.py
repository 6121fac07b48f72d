"""Each form's counts day by day (ActivityRepository), in one statement."""

from __future__ import annotations

from collections.abc import Sequence

from intake.adapters.postgres.database import Database
from intake.domain.activity import GRAIN_ORIGIN, DayCounts, DayGrid

# A range of submissions_form_created per form, and the dead deliveries by their partial
# index deliveries_dead, first counted in bins of the grid's grain (date_bin: cheap, and
# a bin never straddles two days), then each bin given its day by the grid's starts
# (width_bucket: 1 for the first day), a few thousand bins rather than every row.
_DAILY_COUNTS = """
    WITH binned AS (
        SELECT s.form_id, date_bin(%(grain)s, s.created_at, %(origin)s) AS bin,
            s.status AS what, count(*) AS n
        FROM submissions AS s
        WHERE s.form_id = ANY (%(form_ids)s)
            AND s.created_at >= %(since)s AND s.created_at < %(until)s
        GROUP BY 1, 2, 3
        UNION ALL
        SELECT o.form_id, date_bin(%(grain)s, d.created_at, %(origin)s), 'failed', count(*)
        FROM deliveries AS d JOIN outbox AS o ON o.event_id = d.event_id
        WHERE d.state = 'dead' AND d.created_at >= %(since)s AND d.created_at < %(until)s
            AND o.form_id = ANY (%(form_ids)s)
        GROUP BY 1, 2
    )
    SELECT form_id, width_bucket(bin, %(starts)s) - 1 AS day,
        coalesce(sum(n) FILTER (WHERE what = 'accepted'), 0)::integer AS accepted,
        coalesce(sum(n) FILTER (WHERE what = 'spam'), 0)::integer AS spam,
        coalesce(sum(n) FILTER (WHERE what = 'unverified'), 0)::integer AS unverified,
        coalesce(sum(n) FILTER (WHERE what = 'failed'), 0)::integer AS failed
    FROM binned
    GROUP BY 1, 2
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
            "since": grid.starts[0],
            "until": grid.end,
            "grain": grid.grain(),
            "origin": GRAIN_ORIGIN,
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
