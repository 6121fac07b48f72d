"""The charts of the forms list (30 days a form) and of a form's page (90 days), drawn by
presentation/charts.py from the counts `ActivityCounts.daily` reads for the whole page at once,
in the days of INTAKE_DASHBOARD_TIMEZONE (docs/dashboard.md#charts)."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen
from markupsafe import Markup
from starlette.requests import Request

from intake.domain.activity import Activity
from intake.entrypoints.http.dashboard import web
from intake.presentation.charts import LARGE, SMALL, ChartSize, chart_svg, day_label, summary

LIST_DAYS = 30
FORM_DAYS = 90


@frozen
class Chart:
    """What a page shows of one form's activity: the picture, the sentence that names it
    (at `label_id`), and the days (dates as read, counts) for its table of numbers."""

    svg: Markup
    label_id: str
    summary: str
    first_day: str
    last_day: str
    zone: str
    activity: Activity

    def rows(self) -> list[tuple[str, int, int, int]]:
        """Each day as (date, accepted, flagged, failed), for the table of numbers."""
        return [
            (day_label(self.activity.grid.days[c.day]), c.accepted, c.flagged, c.failed)
            for c in self.activity.counts
        ]


def _chart(activity: Activity, label_id: str, size: ChartSize, zone: str) -> Chart:
    days = activity.grid.days
    return Chart(
        svg=chart_svg(activity, label_id, size),
        label_id=label_id,
        summary=summary(activity, failures=size.failed > 0),
        first_day=day_label(days[0]),
        last_day=day_label(days[-1]),
        zone=zone,
        activity=activity,
    )


async def list_charts(request: Request, form_ids: Sequence[str]) -> dict[str, Chart]:
    """Each listed form's last 30 days, by form id, from one query."""
    zone = web.runtime(request).settings.dashboard_timezone
    found = await web.runtime(request).services.activity.daily(form_ids, LIST_DAYS, zone)
    return {
        form_id: _chart(activity, f"chart-{index}", SMALL, zone.key)
        for index, (form_id, activity) in enumerate(found.items())
    }


async def form_chart(request: Request, form_id: str) -> Chart:
    """One form's last 90 days, with its failed deliveries, from one query."""
    zone = web.runtime(request).settings.dashboard_timezone
    found = await web.runtime(request).services.activity.daily([form_id], FORM_DAYS, zone)
    return _chart(found[form_id], "chart-form", LARGE, zone.key)
