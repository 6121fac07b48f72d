"""Each form's counts day by day (ActivityRepository), from the tables in memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from intake.adapters.memory.tables import Repository, utc
from intake.domain.activity import DayCounts, DayGrid
from intake.domain.deliveries import DeliveryState
from intake.domain.model import SubmissionStatus


class InMemoryActivity(Repository):
    async def daily_counts(self, form_ids: Sequence[str], grid: DayGrid) -> Sequence[DayCounts]:
        tables = self._t
        wanted = set(form_ids)
        counted: Counter[tuple[str, int, str]] = Counter()
        for submission in tables.submissions.values():
            day = grid.index_of(utc(submission.created_at))
            if submission.form_id in wanted and day is not None:
                counted[submission.form_id, day, submission.status.value] += 1
        for delivery in tables.deliveries.values():
            row = tables.outbox.get(delivery.event_id)
            if delivery.state is not DeliveryState.DEAD or row is None:
                continue
            day = grid.index_of(utc(delivery.created_at))
            if row.event.form_id in wanted and day is not None:
                counted[row.event.form_id, day, _FAILED] += 1
        return [
            DayCounts(form_id, day, *(counted[form_id, day, key] for key in _COLUMNS))
            for form_id, day in sorted({(form_id, day) for form_id, day, _ in counted})
        ]


_FAILED = "failed"
# DayCounts's counts, in its order.
_COLUMNS = (*(status.value for status in SubmissionStatus), _FAILED)
