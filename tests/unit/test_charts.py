"""The charts' SVG (presentation/charts.py) and the days they count (domain/activity.py):
an empty series, days of nothing, one huge day among small ones, 90 bars, the summary
in words, and local days across daylight-saving changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from xml.etree import ElementTree
from zoneinfo import ZoneInfo

from intake.domain.activity import Activity, DayCounts, DayGrid, activities
from intake.presentation.charts import LARGE, SMALL, chart_svg, summary

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
SVG = "{http://www.w3.org/2000/svg}"


def series(days: int, counts: dict[int, tuple[int, int, int]] | None = None) -> Activity:
    """`days` days ending on NOW's, in UTC; `counts`: day: (accepted, spam, failed)."""
    grid = DayGrid.ending_today(NOW, days, ZoneInfo("UTC"))
    rows = [
        DayCounts("frm_1", day, accepted=a, spam=s, failed=f)
        for day, (a, s, f) in (counts or {}).items()
    ]
    return activities(["frm_1"], grid, rows)["frm_1"]


def bars(svg: str, kind: str) -> list[ElementTree.Element]:
    root = ElementTree.fromstring(svg)
    return [rect for rect in root.iter(f"{SVG}rect") if rect.get("class") == kind]


def test_days_with_nothing_draw_a_baseline_and_no_bar() -> None:
    activity = series(30)

    svg = str(chart_svg(activity, "chart-1", SMALL))

    root = ElementTree.fromstring(svg)
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "chart-1"
    assert root.get("viewBox") == "0 0 120 25"
    assert bars(svg, "chart-accepted") == []
    assert bars(svg, "chart-flagged") == []
    assert len(list(root.iter(f"{SVG}line"))) == 1
    assert len(list(root.iter(f"{SVG}title"))) == 30  # every day answers a pointer
    assert "style" not in svg
    assert summary(activity) == "Last 30 days: 0 accepted, 0 flagged; no submissions."


def test_an_empty_grid_draws_an_empty_chart() -> None:
    activity = series(0)

    svg = str(chart_svg(activity, "c", SMALL))

    assert ElementTree.fromstring(svg).get("viewBox") == "0 0 0 25"
    assert activity.busiest() is None
    assert activity.spam_share is None


def test_one_huge_day_keeps_the_small_days_visible() -> None:
    activity = series(30, {3: (1, 0, 0), 10: (100_000, 2, 0), 29: (0, 1, 0)})

    svg = str(chart_svg(activity, "c", SMALL))

    heights = sorted(int(rect.get("height", "")) for rect in bars(svg, "chart-accepted"))
    assert heights == [1, SMALL.height - 1]  # the day of 1 still shows; the huge day fills
    flagged = [int(rect.get("height", "")) for rect in bars(svg, "chart-flagged")]
    assert flagged == [1, 1]
    for rect in bars(svg, "chart-flagged") + bars(svg, "chart-accepted"):
        assert 0 <= int(rect.get("y", "")) <= SMALL.height
    assert summary(activity) == (
        "Last 30 days: 100001 accepted, 3 flagged (under 1% spam); busiest day 1 Nov: 100002."
    )


def test_ninety_bars_fit_the_large_chart_with_their_failed_deliveries() -> None:
    activity = series(90, {day: (day % 7, day % 3, day % 2) for day in range(90)})

    svg = str(chart_svg(activity, "chart-form", LARGE))

    root = ElementTree.fromstring(svg)
    assert root.get("viewBox") == f"0 0 {90 * LARGE.slot} {LARGE.height + 1 + LARGE.failed}"
    slots = [float(rect.get("x", "")) for rect in bars(svg, "chart-slot")]
    assert slots == [day * LARGE.slot for day in range(90)]
    assert len(bars(svg, "chart-failed")) == 45
    # The busiest days (6 accepted and 2 spam: 20, 41, 62, 83) reach the top.
    tops = [rect.get("x") for rect in bars(svg, "chart-flagged") if rect.get("y") == "0"]
    assert tops == [f"{day * LARGE.slot + 1}" for day in (20, 41, 62, 83)]
    assert "1 delivery failed" in svg
    assert summary(activity, failures=True).endswith("; 45 deliveries failed.")


def test_text_in_the_chart_is_escaped() -> None:
    svg = str(chart_svg(series(3), 'x"><script>', SMALL))

    assert "<script>" not in svg
    assert 'aria-labelledby="x&quot;&gt;&lt;script&gt;"' in svg


def test_a_day_is_its_time_zones_day_across_daylight_saving_changes() -> None:
    paris = ZoneInfo("Europe/Paris")
    # Paris went back an hour on 25 October 2026: that day lasted 25 hours.
    grid = DayGrid.ending_today(datetime(2026, 10, 26, 1, 0, tzinfo=UTC), 3, paris)

    assert grid.days == (date(2026, 10, 24), date(2026, 10, 25), date(2026, 10, 26))
    assert grid.starts[2] - grid.starts[1] == timedelta(hours=25)
    assert grid.starts[0] == datetime(2026, 10, 23, 22, 0, tzinfo=UTC)
    assert grid.ends[1] == datetime(2026, 10, 25, 23, 0, tzinfo=UTC)
    assert grid.ends == (*grid.starts[1:], grid.end)
