"""The charts in Chromium: the forms list's 30 days a form and a form's 90 days, at 1280
and 390 px wide, in the light and the dark scheme; axe-core finds nothing on either page,
nothing scrolls sideways, the summary names each chart, and the table of numbers opens
without a script. The screenshots go where INTAKE_DOCS_SCREENSHOTS says (`make
screenshots`), else to a temporary directory."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import httpx
import pytest
from playwright.sync_api import Browser, Page

from intake.adapters.sqlite.connection import database_path
from intake.adapters.sqlite.mapping import time_text
from intake.domain import ids
from tests.browser.axe import assert_accessible
from tests.browser.conftest import BROWSER_TIMEOUT_MS, Service, assert_real_png
from tests.browser.dashboard_steps import sign_in_with_the_link

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
SCHEMES: tuple[Literal["light", "dark"], ...] = ("light", "dark")
QUIET = range(40, 47)  # days back with nothing: a week away


def _submit(service: Service, key: str, name: str) -> str:
    answer = httpx.post(
        f"{service.base}/f/{key}",
        json={"name": name, "email": "visitor@example.org", "message": "Hello"},
        headers={"Accept": "application/json"},
    )
    assert answer.status_code == 201, answer.text
    submission_id: str = answer.json()["submission_id"]
    return submission_id


def _history(service: Service, model_id: str, form_days: int, scale: int) -> None:
    """Copies of a real submission spread over the past days, as months of visitors
    would have left them (some days spam, a quiet week, a busy day); and three
    deliveries of its event that failed for good."""
    now = datetime.now(UTC)
    path = database_path(service.env["INTAKE_DATABASE_URL"])
    with closing(sqlite3.connect(path)) as conn, conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(submissions)")]
        chosen = ", ".join(
            {"submission_id": ":id", "created_at": ":at", "status": ":status"}.get(c, c)
            for c in columns
        )
        copy = (
            f"INSERT INTO submissions ({', '.join(columns)}) "
            f"SELECT {chosen} FROM submissions WHERE submission_id = :model"
        )
        for back in range(1, form_days):
            if back in QUIET:
                continue
            count = scale * (1 + (back * 7) % 5 + (4 if back == 12 else 0))
            for n in range(count):
                moment = now - timedelta(days=back, minutes=n * 13)
                status = "spam" if n % 6 == 5 else "accepted"
                random = (back * 1000 + n).to_bytes(ids.SUBMISSION_RANDOM_BYTES, "big")
                copy_id = ids.submission_id(int(moment.timestamp() * 1000), random)
                at = time_text(moment)
                conn.execute(copy, {"id": copy_id, "at": at, "status": status, "model": model_id})
        event = conn.execute(
            "SELECT event_id FROM outbox WHERE submission_id = ?", (model_id,)
        ).fetchone()[0]
        for back in (5, 20, 21):
            when = time_text(now - timedelta(days=back))
            conn.execute(
                "INSERT INTO deliveries (delivery_id, event_id, kind, destination_id, state,"
                " attempts, last_error, dead_at, created_at)"
                " VALUES (?, ?, 'webhook', ?, 'dead', 8, 'HTTP 503', ?, ?)",
                (f"dlv_{model_id}_{back}", event, f"wh_gone_{back}", when, when),
            )


@dataclass(frozen=True)
class Charted:
    base: str  # the service's address
    form_id: str  # the form with 90 days of submissions
    state: dict[str, object]  # an owner's signed-in browser state
    shots: Path  # where the screenshots go


@pytest.fixture(scope="module")
def charted(
    service: Service, browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> Charted:
    """A workspace whose two forms have months of submissions, and its owner."""
    workspace_id = service.intake("workspace", "create", "--name", "Chart Studio")["workspace_id"]
    contact = service.create_form(workspace_id, "--name", "Contact")
    newsletter = service.create_form(workspace_id, "--name", "Newsletter sign-up")
    _history(service, _submit(service, contact["public_form_key"], "Maria"), 90, 2)
    _history(service, _submit(service, newsletter["public_form_key"], "Tom"), 30, 1)
    context = browser.new_context()
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    page = context.new_page()
    sign_in_with_the_link(service, page, workspace_id, "charts-owner@acme.example")
    state = context.storage_state()
    context.close()
    shots = os.environ.get("INTAKE_DOCS_SCREENSHOTS")
    target = Path(shots) if shots else tmp_path_factory.mktemp("charts")
    return Charted(service.base, contact["form_id"], dict(state), target)


def _page(browser: Browser, state: dict[str, object], size: str) -> Page:
    width, height = SIZES[size]
    context = browser.new_context(
        viewport={"width": width, "height": height},
        storage_state=state,  # type: ignore[arg-type]
    )
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    return context.new_page()


def _shot(page: Page, path: Path, size: tuple[int, int]) -> None:
    page.screenshot(path=str(path))
    assert_real_png(path, size)


def _no_sideways_scroll(page: Page) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 0, f"{page.url} scrolls {wide} px sideways"


def _checked(page: Page, folder: Path, name: str, size: str) -> None:
    """In each scheme, switched on the page shown as the system's setting switches it:
    nothing scrolls sideways, axe finds nothing serious, and the screenshot
    NAME-SIZE-SCHEME.png shows something."""
    for scheme in SCHEMES:
        page.emulate_media(color_scheme=scheme)
        _no_sideways_scroll(page)
        assert_accessible(page)
        _shot(page, folder / f"{name}-{size}-{scheme}.png", SIZES[size])


@pytest.mark.parametrize("size", list(SIZES))
def test_the_charts_show_read_and_pass_axe(browser: Browser, charted: Charted, size: str) -> None:
    page = _page(browser, charted.state, size)
    try:
        page.goto(f"{charted.base}/dashboard")
        row = page.get_by_role("row").filter(has_text="Contact")
        chart = row.get_by_role("img")
        assert chart.is_visible()
        name = chart.get_attribute("aria-labelledby")
        assert name
        assert page.locator(f"#{name}").inner_text().startswith("Last 30 days: ")
        assert page.locator("svg.chart").count() >= 2
        _checked(page, charted.shots, "charts-forms", size)

        page.goto(f"{charted.base}/dashboard/forms/{charted.form_id}")
        chart = page.get_by_role("img", name="Last 90 days")
        assert chart.is_visible()
        summary = page.locator("figcaption").inner_text()
        assert "3 deliveries failed" in summary
        assert page.locator("svg.chart .chart-failed").count() == 2 + 1
        numbers = page.get_by_role("table").filter(has_text="Deliveries failed")
        assert not numbers.is_visible()
        page.get_by_text("The numbers, day by day").click()
        assert numbers.is_visible()
        assert numbers.get_by_role("row").count() == 90 + 1
        page.get_by_text("The numbers, day by day").click()
        _checked(page, charted.shots, "charts-form", size)
    finally:
        page.context.close()
