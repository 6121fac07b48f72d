"""docs/snippets/plain-form.html in Chromium, through the states docs/browsers.md shows
beside intake.js's: the form, intake's 422 and 429 pages, and its thank-you page. With
INTAKE_DOCS_SCREENSHOTS set to a folder, each is written there (`make screenshots`)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page

from tests.browser.conftest import Service, Site, assert_real_png, click_send, snippet

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BURST = 5  # the public burst limit per address and form (spec part 8)


def _screenshot(page: Page, tmp_path: Path, name: str) -> None:
    folder = os.environ.get("INTAKE_DOCS_SCREENSHOTS")
    path = Path(folder) / f"{name}.png" if folder else tmp_path / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    assert_real_png(path)


def _fill(page: Page, message: str) -> None:
    page.fill("input[name=name]", "Ada")
    page.fill("input[name=email]", "ada@example.com")
    page.check("input[name=topics][value=support]")
    page.fill("textarea[name=message]", message)


def test_the_plain_forms_states(
    page: Page, site: Site, service: Service, workspace_id: str, tmp_path: Path
) -> None:
    form = service.create_form(
        workspace_id, "--name", "Plain states", "--rule", "message:max_length=10"
    )
    key = form["public_form_key"]
    url = site.put(
        f"/{form['form_id']}.html", snippet("plain-form.html", base=service.base, key=key)
    )
    page.goto(url)
    _screenshot(page, tmp_path, "plain-idle")

    _fill(page, "Far longer than ten")
    refused = click_send(page)
    assert refused.status == 422
    assert page.inner_text("li") == "message: Please use at most 10 characters."
    _screenshot(page, tmp_path, "plain-field-errors")

    page.goto(url)
    _fill(page, "Short")
    sent = click_send(page)
    assert sent.status == 200
    assert page.url == f"{service.base}/f/{key}/thanks"
    _screenshot(page, tmp_path, "plain-success")

    # The burst of this address spent (two posts above, the rest here): a 429 page.
    for n in range(BURST - 2):
        httpx.post(f"{service.base}/f/{key}", json={"email": f"n{n}@example.com"})
    page.goto(url)
    _fill(page, "Short")
    limited = click_send(page)
    assert limited.status == 429
    assert "Too many submissions" in page.inner_text("body")
    _screenshot(page, tmp_path, "plain-rate-limited")
    assert len(service.submissions(form["form_id"])) == BURST - 1
