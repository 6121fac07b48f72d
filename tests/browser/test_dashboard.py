"""The dashboard in Chromium, as its users meet it: a one-time link sets the password and
signs in, the inbox and a submission show what a visitor typed, and hostile values stay
text (no dialog opens, no script runs, no submitted URL becomes a link)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Dialog, Page

from tests.browser.conftest import Service, assert_real_png
from tests.browser.dashboard_steps import (
    PASSWORD,
    only_the_dashboards_script,
    sign_in,
    sign_in_with_the_link,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE = {
    "name": "<script>alert('name')</script>",
    "message": "<img src=x onerror=alert('message')>",
    "website": "javascript:alert('website')",
    "_subject": "<b>Quote</b> <script>alert('subject')</script>",
}


def test_a_link_sets_the_password_and_the_owner_reads_hostile_submissions_inert(
    service: Service, workspace_id: str, page: Page, tmp_path: Path
) -> None:
    form = service.create_form(workspace_id, "--name", "Quotes")
    answer = httpx.post(f"{service.base}/f/{form['public_form_key']}", json=HOSTILE)
    assert answer.status_code == 201, answer.text
    dialogs: list[str] = []

    def seen(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", seen)

    sign_in_with_the_link(service, page, workspace_id, "owner@example.com")
    assert urlsplit(page.url).path == "/dashboard", page.content()
    page.goto(f"{service.base}/dashboard/forms/{form['form_id']}")
    inbox_shot = tmp_path / "inbox.png"
    page.screenshot(path=str(inbox_shot))
    page.locator("table a").first.click()
    page.wait_for_load_state()
    submission_shot = tmp_path / "submission.png"
    page.screenshot(path=str(submission_shot))

    assert dialogs == []
    assert_real_png(inbox_shot)
    assert_real_png(submission_shot)
    body = page.locator("body").inner_text()
    # Each hostile value is shown as the text it is.
    for value in ("<script>alert('name')</script>", "javascript:alert('website')"):
        assert value in body
    assert page.locator("a[href^='javascript:']").count() == 0
    assert page.locator("img[src='x']").count() == 0
    only_the_dashboards_script(page)


def test_a_wrong_password_and_an_unknown_address_get_the_same_page(
    service: Service, workspace_id: str, page: Page
) -> None:
    sign_in_with_the_link(service, page, workspace_id, "known@example.com")
    page.context.clear_cookies()

    texts: list[str] = []
    statuses: list[int] = []
    for email in ("known@example.com", "nobody@example.com"):
        statuses.append(sign_in(service, page, email, "not the password at all"))
        texts.append(page.locator("main").inner_text())

    assert texts[0] == texts[1]
    assert statuses[0] == statuses[1]
    assert urlsplit(page.url).path == "/dashboard/sign-in"
    # The same form with the right password signs in: the refusals above are refusals.
    page.fill("#email", "known@example.com")
    page.fill("#password", PASSWORD)
    page.get_by_role("button").last.click()
    page.wait_for_load_state()
    assert urlsplit(page.url).path == "/dashboard", page.content()
