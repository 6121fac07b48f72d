"""The dashboard's charts on every store: the forms list draws each form's last 30 days
and the form's page its last 90, with failed deliveries, as SVG named by a summary in
words (and, on the form's page, a table of the numbers); days in the time zone of
INTAKE_DASHBOARD_TIMEZONE; each page's counts from one query."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from intake.config import Settings
from intake.domain.activity import DayCounts, DayGrid
from intake.domain.model import Scope
from intake.ports.activity import ActivityRepository
from tests.http.conftest import (
    HarnessStore,
    ServiceFactory,
)
from tests.http.dashboard_support import Dashboard

NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
SITE = "https://example.com/"  # a link: scores above a threshold of 0.001
CHART = re.compile(r'<svg class="chart"[^>]*role="img" aria-labelledby="([\w-]+)"')


class Charts:
    def __init__(self, dash: Dashboard) -> None:
        self.dash = dash
        self.svc = dash.svc
        self.form_id = dash.form.form_id
        created = self.svc.run(
            self.svc.services.keys.create,
            dash.workspace.workspace_id,
            scopes=frozenset({Scope.SUBMIT}),
        )
        self.secret = created.secret
        dash.set_password(dash.link("owner@example.com"))

    def submit_at(self, moment: datetime, *, spam: bool = False, form_id: str = "") -> None:
        self.svc.clock.set(moment)
        form_id = form_id or self.form_id
        if spam:
            self.svc.update_form(form_id, spam_threshold=0.001)
        data = {"site": SITE} if spam else {"name": "Ada"}
        answer = self.svc.server(form_id, self.secret, json=data)
        assert answer.status_code == 201, answer.text
        if spam:
            self.svc.update_form(form_id, spam_threshold=0.5)

    def count_queries(self) -> list[int]:
        """The number of forms each chart query asks for from now on, one entry a query."""
        store = self.svc.store
        assert isinstance(store, HarnessStore)
        counting = CountingActivity(store.activity)
        store.activity = counting
        return counting.asked


class CountingActivity:
    def __init__(self, inner: ActivityRepository) -> None:
        self.inner = inner
        self.asked: list[int] = []

    async def daily_counts(self, form_ids: Sequence[str], grid: DayGrid) -> Sequence[DayCounts]:
        self.asked.append(len(form_ids))
        return await self.inner.daily_counts(form_ids, grid)


@pytest.fixture
def charts(make_service: ServiceFactory) -> Charts:
    return Charts(Dashboard(make_service()))


def summary_of(html: str, label_id: str) -> str:
    found = re.search(rf'<span id="{label_id}"[^>]*>([^<]*)</span>', html)
    assert found is not None, f"no summary {label_id}"
    return found.group(1)


def test_the_forms_list_draws_each_forms_last_30_days_from_one_query(
    charts: Charts,
) -> None:
    other = charts.svc.form(charts.dash.workspace.workspace_id, name="Other")
    charts.submit_at(NOW - timedelta(days=2))
    charts.submit_at(NOW - timedelta(days=40))  # before the 30 days
    for _ in range(2):
        charts.submit_at(NOW)
    charts.submit_at(NOW, spam=True)
    asked = charts.count_queries()

    page = charts.dash.client.get("/dashboard")

    assert page.status_code == 200
    assert asked == [2]  # both forms, in one query
    labels = CHART.findall(page.text)
    assert len(labels) == 2
    summaries = {summary_of(page.text, label) for label in labels}
    assert summaries == {
        "Last 30 days: 3 accepted, 1 flagged (25% spam); busiest day 15 Jan: 3.",
        "Last 30 days: 0 accepted, 0 flagged; no submissions.",
    }
    assert "<title>15 Jan: 2 accepted, 1 flagged</title>" in page.text
    assert "<title>13 Jan: 1 accepted, 0 flagged</title>" in page.text
    assert "style=" not in page.text  # the CSP allows no inline style
    assert other.form_id in page.text


def test_a_forms_page_draws_90_days_with_failed_deliveries_and_a_table(
    charts: Charts,
) -> None:
    charts.submit_at(NOW - timedelta(days=60))
    charts.submit_at(NOW - timedelta(days=60), spam=True)
    charts.submit_at(NOW - timedelta(days=95))  # before the 90 days
    store = charts.svc.store
    charts.svc.run(store.deliveries.fan_out, NOW - timedelta(days=60), 100)  # nowhere to go
    charts.svc.run(charts.svc.services.webhooks.add, charts.form_id, "https://hooks.example.com/x")
    moment = NOW - timedelta(days=1)
    charts.submit_at(moment)
    # Its one delivery fails for good: as the relay records a last failed attempt.
    charts.svc.run(store.deliveries.fan_out, moment, 100)
    claim = charts.svc.run(store.deliveries.claim_due, moment, timedelta(minutes=1), 10)
    for claimed in claim.leased:
        delivery_id = claimed.delivery.delivery_id
        charts.svc.run(store.deliveries.record_failure, delivery_id, moment, "503", None)
    charts.svc.clock.set(NOW)
    asked = charts.count_queries()

    page = charts.dash.client.get(f"/dashboard/forms/{charts.form_id}")

    assert page.status_code == 200
    assert asked == [1]
    [label] = CHART.findall(page.text)
    assert summary_of(page.text, label) == (
        "Last 90 days: 2 accepted, 1 flagged (33% spam); busiest day 16 Nov: 2; 1 delivery failed."
    )
    assert "<title>14 Jan: 1 accepted, 0 flagged, 1 delivery failed</title>" in page.text
    assert page.text.count('class="chart-failed"') == 1
    cells = r'((?:<td class="count">\d+</td>){3})'
    rows = re.findall(rf'<tr><th scope="row">([^<]+)</th>{cells}</tr>', page.text)
    assert len(rows) == 90
    assert rows[0][0] == "18 Oct"  # across months with nothing
    assert rows[-1][0] == "15 Jan"
    counts = {day: re.findall(r"\d+", numbers) for day, numbers in rows}
    assert counts["16 Nov"] == ["1", "1", "0"]
    assert counts["14 Jan"] == ["1", "0", "1"]


def test_the_days_are_those_of_the_dashboards_time_zone(make_service: ServiceFactory) -> None:
    settings = Settings.from_env({"INTAKE_DASHBOARD_TIMEZONE": "Pacific/Auckland"})
    charts = Charts(Dashboard(make_service(settings)))
    # 11:30 UTC on 15 January is 00:30 on the 16th in Auckland (UTC+13).
    charts.submit_at(datetime(2026, 1, 15, 11, 30, tzinfo=UTC))
    charts.submit_at(datetime(2026, 1, 15, 10, 30, tzinfo=UTC))
    charts.svc.clock.set(NOW)

    page = charts.dash.client.get(f"/dashboard/forms/{charts.form_id}")

    assert "<title>16 Jan: 1 accepted, 0 flagged</title>" in page.text
    assert "<title>15 Jan: 1 accepted, 0 flagged</title>" in page.text
    assert "days from midnight to midnight in Pacific/Auckland" in page.text
    listed = charts.dash.client.get("/dashboard")
    assert "days in Pacific/Auckland." in listed.text
