"""A form's activity drawn as SVG on the server (docs/dashboard.md#charts): a bar a day,
accepted below and flagged (spam, unverified) stacked above, scaled to the busiest day,
on a baseline; the deliveries that failed as a mark under it. No script and no style
attribute (the dashboard's CSP allows neither): the stylesheet colours the classes.
The picture is one image to a screen reader, named by a summary in words beside it,
and each bar has a `<title>` for a pointer."""

from __future__ import annotations

from datetime import date
from html import escape

from attrs import frozen
from markupsafe import Markup

from intake.domain.activity import Activity, DayCounts

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@frozen
class ChartSize:
    """A chart's drawing units: each day a slot of `slot` wide holding a bar of `bar`;
    bars rise `height` at most; `failed` is the band under the baseline for the marks
    of failed deliveries (0: none drawn)."""

    slot: int
    bar: int
    height: int
    failed: int = 0


SMALL = ChartSize(slot=4, bar=3, height=24)  # the forms list: 30 days
LARGE = ChartSize(slot=8, bar=6, height=80, failed=6)  # a form's page: 90 days


def day_label(day: date) -> str:
    """`14 Nov`, whatever the server's locale."""
    return f"{day.day} {_MONTHS[day.month - 1]}"


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def spam_percent(activity: Activity) -> str | None:
    """The share of flagged submissions as people read it: `8%`, `under 1%`; None
    with no submissions."""
    share = activity.spam_share
    if share is None:
        return None
    if 0 < share < 0.01:
        return "under 1%"
    return f"{round(share * 100)}%"


def summary(activity: Activity, *, failures: bool = False) -> str:
    """The chart in one sentence: `Last 30 days: 412 accepted, 37 flagged (8% spam);
    busiest day 14 Nov: 41.` With `failures`, the failed deliveries too."""
    days = len(activity.grid.days)
    words = f"Last {days} days: {activity.accepted} accepted, {activity.flagged} flagged"
    share = spam_percent(activity)
    if share is not None:
        words += f" ({share} spam)"
    busiest = activity.busiest()
    if busiest is None:
        words += "; no submissions"
    else:
        words += f"; busiest day {day_label(busiest[0])}: {busiest[1]}"
    if failures:
        words += "; " + _plural(activity.failed, "delivery", "deliveries") + " failed"
    return words + "."


def _day_title(day: date, counts: DayCounts, failures: bool) -> str:
    words = f"{day_label(day)}: {counts.accepted} accepted, {counts.flagged} flagged"
    if failures and counts.failed:
        words += ", " + _plural(counts.failed, "delivery", "deliveries") + " failed"
    return words


def _height(count: int, busiest: int, room: int) -> int:
    """A count's bar height: to scale, but never below one unit, so a day with
    something is never drawn as a day with nothing."""
    if count == 0:
        return 0
    return max(1, round(count * room / busiest))


def chart_svg(activity: Activity, label_id: str, size: ChartSize) -> Markup:
    """The chart as an `<svg>` element, named by the element whose id is `label_id`
    (which the page must hold: the summary in words)."""
    busiest = max((day.accepted + day.flagged for day in activity.counts), default=0)
    width = len(activity.counts) * size.slot
    total_height = size.height + 1 + size.failed
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {total_height}" preserveAspectRatio="none"'
        ' role="img"'
        f' aria-labelledby="{escape(label_id)}" focusable="false"'
        ' xmlns="http://www.w3.org/2000/svg">',
    ]
    for counts in activity.counts:
        parts.append(_bar(activity.grid.days[counts.day], counts, busiest, size))
    parts.append(
        f'<line class="chart-baseline" x1="0" y1="{size.height + 0.5}"'
        f' x2="{width}" y2="{size.height + 0.5}"/>'
    )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every text in it is escaped


def _bar(day: date, counts: DayCounts, busiest: int, size: ChartSize) -> str:
    failures = size.failed > 0
    x = counts.day * size.slot + (size.slot - size.bar) / 2
    accepted = _height(counts.accepted, busiest, size.height)
    flagged = _height(counts.flagged, busiest, size.height)
    over = accepted + flagged - size.height  # the minimum of one unit each, on a full day
    if over > 0 and accepted >= flagged:
        accepted -= over
    elif over > 0:
        flagged -= over
    parts = [f"<g><title>{escape(_day_title(day, counts, failures))}</title>"]
    # A transparent slot the whole height, so that the title shows over an empty day.
    parts.append(
        f'<rect class="chart-slot" x="{counts.day * size.slot}" y="0"'
        f' width="{size.slot}" height="{size.height}"/>'
    )
    if accepted:
        parts.append(_rect("chart-accepted", x, size.height - accepted, size.bar, accepted))
    if flagged:
        top = size.height - accepted - flagged
        parts.append(_rect("chart-flagged", x, top, size.bar, flagged))
    if failures and counts.failed:
        parts.append(_rect("chart-failed", x, size.height + 1, size.bar, size.failed))
    parts.append("</g>")
    return "".join(parts)


def _rect(kind: str, x: float, y: int, width: int, height: int) -> str:
    return f'<rect class="{kind}" x="{x:g}" y="{y}" width="{width}" height="{height}"/>'
