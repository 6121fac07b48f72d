"""The inbox's tools and a submission's page in Chromium, at 1280 and 390 px wide: sign-in
leading back to the inbox asked for, the skip link, counts on the tabs, select all on
the page (with the script, and without it), a bulk action saying what it did; a long
value folded behind "Show all", the delivery timeline naming the webhook by its host and
retrying it, "Copy as JSON", and a release saying so. axe-core finds nothing on any of
these screens, in the light and the dark scheme, and nothing scrolls sideways. The
screenshots go where INTAKE_DOCS_SCREENSHOTS says (`make screenshots`), else to a
temporary directory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, ViewportSize

from tests.browser.axe import axe_violations, describe
from tests.browser.conftest import BROWSER_TIMEOUT_MS, Service, assert_real_png
from tests.browser.dashboard_steps import PASSWORD, sign_in_with_the_link, submit

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
HOOK = "https://hooks.example.com/intake/s3cret-token"
LONG = " ".join(f"Line {n} of a long brief, with enough words to fill it." for n in range(20))


def _clean(page: Page, schemes: tuple[Literal["light", "dark"], ...] = ("light", "dark")) -> None:
    """No axe violation at all, of any impact, in each scheme; nothing wider than the
    viewport."""
    for scheme in schemes:
        page.emulate_media(color_scheme=scheme)
        violations = axe_violations(page)
        assert not violations, f"{scheme}: {describe(violations)}"
    width = page.viewport_size["width"] if page.viewport_size else 0
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def _shot(page: Page, tmp_path: Path, name: str, width: int) -> None:
    """A screenshot in the light scheme, checked to show something: into
    INTAKE_DOCS_SCREENSHOTS (`make screenshots`) as `<name>-<desktop|phone>-light.png`,
    else into the test's temporary directory."""
    shots = os.environ.get("INTAKE_DOCS_SCREENSHOTS")
    folder = Path(shots) if shots else tmp_path
    page.emulate_media(color_scheme="light")
    path = folder / f"{name}-{'phone' if width < 600 else 'desktop'}-light.png"
    page.screenshot(path=str(path))
    size = page.viewport_size
    assert size is not None
    assert_real_png(path, (size["width"], size["height"]))


def _status(page: Page) -> str:
    return page.locator("main > p.notice[role=status]").inner_text()


def _form(service: Service, width: int) -> tuple[str, str, str, dict[str, str]]:
    """A workspace with a form, a webhook and four submissions (one long, one spam):
    the workspace's and form's ids, the form's public key, and the submissions' ids."""
    workspace_id: str = service.intake(
        "workspace", "create", "--name", f"Inbox tools {width}", "--plan", "starter"
    )["workspace_id"]
    form = service.create_form(workspace_id, "--name", "Contact")
    service.intake("webhook", "add", "--form", form["form_id"], "--url", HOOK)
    key = form["public_form_key"]
    made = {
        "quote": submit(
            service,
            key,
            {"_replyto": "maria@example.org", "_subject": "A quote", "message": "Hello"},
        ),
        "long": submit(service, key, {"name": "Priya", "brief": LONG}),
        "short": submit(service, key, {"name": "Tom", "message": "Hi there"}),
        "junk": submit(service, key, {"name": "SEO", "message": "Rank first!"}),
    }
    service.intake("submissions", "mark-spam", made["junk"])
    # The events fanned out to their deliveries; the webhook's host does not answer here.
    service.intake("relay", "--once")
    return workspace_id, form["form_id"], key, made


def _sign_in_to(page: Page, service: Service, path: str, email: str) -> None:
    """Asked for `path` without a session: the sign-in form, then `path`."""
    page.context.clear_cookies()
    page.goto(service.base + path)
    assert urlsplit(page.url).path == "/dashboard/sign-in"
    page.fill("#email", email)
    page.fill("#password", PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()
    assert page.url == service.base + path


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_the_inbox_counts_selects_and_says_what_it_did(
    service: Service, browser: Browser, page: Page, tmp_path: Path, viewport: ViewportSize
) -> None:
    width = viewport["width"]
    page.set_viewport_size(viewport)
    workspace_id, form_id, _, made = _form(service, width)
    email = f"inbox-{width}@example.com"
    sign_in_with_the_link(service, page, workspace_id, email)
    inbox = f"/dashboard/forms/{form_id}?status=accepted"
    _sign_in_to(page, service, inbox, email)

    # The skip link is the first stop of the keyboard, and leads to the content.
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the main content")
    assert skip.evaluate("element => element === document.activeElement")
    assert skip.is_visible()
    page.keyboard.press("Enter")
    assert urlsplit(page.url).fragment == "main"

    tabs = page.get_by_role("navigation", name="Status")
    assert tabs.get_by_role("link", name="accepted 3").get_attribute("aria-current") == "page"
    assert tabs.get_by_role("link", name="spam 1").is_visible()
    assert "Showing 3 of 3 accepted submissions." in page.locator(".total").inner_text()
    # Each row's box is named by its sender and subject, or its first value.
    assert page.get_by_label("Select maria@example.org, A quote,").count() == 1
    _clean(page)
    tabs.evaluate("e => e.scrollIntoView()")
    _shot(page, tmp_path, "inbox-tools", width)

    # With the script, the boxes are ticked in place; the same link clears them.
    boxes = page.locator('input[type="checkbox"][name="id"]')
    page.get_by_role("link", name="Select all 3 on this page").click()
    assert [boxes.nth(i).is_checked() for i in range(3)] == [True] * 3
    assert urlsplit(page.url).query == "status=accepted"  # no page load
    page.get_by_role("link", name="Clear the selection").click()
    assert not any(boxes.nth(i).is_checked() for i in range(3))

    # Without it, the link loads the page with every box ticked.
    plain = browser.new_context(
        viewport=viewport, java_script_enabled=False, storage_state=page.context.storage_state()
    )
    plain.set_default_timeout(BROWSER_TIMEOUT_MS)
    try:
        bare = plain.new_page()
        bare.goto(service.base + inbox)
        bare.get_by_role("link", name="Select all 3 on this page").click()
        bare.wait_for_load_state()
        bare_boxes = bare.locator('input[type="checkbox"][name="id"]')
        assert [bare_boxes.nth(i).is_checked() for i in range(3)] == [True] * 3
        assert "select=page" in bare.url
    finally:
        plain.close()

    page.get_by_label("Select Tom,").check()
    page.get_by_label("With the selected").select_option("spam")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_load_state()
    assert _status(page) == "1 submission marked as spam."
    assert (
        page.get_by_role("navigation", name="Status")
        .get_by_role("link", name="spam 2")
        .is_visible()
    )
    _clean(page, ("light",))
    _shot(page, tmp_path, "inbox-told", width)
    page.reload()
    assert page.locator("main > p.notice").count() == 0  # said once
    assert made["short"]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_a_submissions_page_folds_names_retries_and_copies(
    service: Service, page: Page, tmp_path: Path, viewport: ViewportSize
) -> None:
    width = viewport["width"]
    page.set_viewport_size(viewport)
    workspace_id, _, _, made = _form(service, width + 1)
    sign_in_with_the_link(service, page, workspace_id, f"submission-{width}@example.com")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{service.base}/dashboard/submissions/{made['long']}")
    assert page.title() == "Submission · Contact · intake"

    # A long value shows its start, and the whole once "Show all" is opened.
    summary = page.get_by_text(f"Show all {len(LONG):,} characters")
    head = page.locator(".fold-head")
    assert head.is_visible()
    assert page.get_by_text(LONG, exact=True).is_hidden()
    _clean(page)
    page.locator(".folded").evaluate("e => e.scrollIntoView({block: 'center'})")
    _shot(page, tmp_path, "submission-folded", width)
    summary.click()
    assert page.get_by_text(LONG, exact=True).is_visible()
    assert head.is_hidden()

    # The timeline names the webhook by its host, never its path, and retries it.
    deliveries = page.locator("ol.timeline")
    assert (
        deliveries.locator("h3").inner_text().startswith("Webhook to https://hooks.example.com/…: ")
    )
    assert "s3cret" not in page.content()
    deliveries.evaluate("e => e.scrollIntoView({block: 'center'})")
    _shot(page, tmp_path, "submission-timeline", width)
    deliveries.get_by_role("button", name="Retry now").click()
    page.wait_for_load_state()
    assert _status(page).startswith(
        "The webhook delivery to https://hooks.example.com/… is due again"
    )
    assert urlsplit(page.url).fragment == "deliveries"
    _clean(page)
    page.evaluate("window.scrollTo(0, 0)")
    _shot(page, tmp_path, "submission-retried", width)

    # "Copy as JSON" puts the API's JSON on the clipboard.
    page.get_by_role("button", name="Copy as JSON").click()
    page.get_by_text("Copied.").wait_for()
    copied = json.loads(page.evaluate("navigator.clipboard.readText()"))
    assert copied["submission_id"] == made["long"]
    assert copied["data"]["brief"] == LONG

    page.goto(f"{service.base}/dashboard/submissions/{made['junk']}")
    page.get_by_role("button", name="Release (accept)").click()
    page.wait_for_load_state()
    assert _status(page) == "Released: the submission is accepted."
    _clean(page, ("light",))


def test_without_the_script_a_submission_offers_no_copy_button(
    service: Service, browser: Browser, page: Page
) -> None:
    """ "Copy as JSON" needs the script: without it the button stays hidden (its `hidden`
    attribute outweighs the look of buttons), and "View as JSON" is there instead."""
    workspace_id, _, _, made = _form(service, 2)
    sign_in_with_the_link(service, page, workspace_id, "no-script@example.com")
    plain = browser.new_context(
        viewport=PHONE, java_script_enabled=False, storage_state=page.context.storage_state()
    )
    plain.set_default_timeout(BROWSER_TIMEOUT_MS)
    try:
        bare = plain.new_page()
        bare.goto(f"{service.base}/dashboard/submissions/{made['short']}")
        assert bare.get_by_role("link", name="View as JSON").is_visible()
        assert bare.locator("button.copy-json").is_hidden()
    finally:
        plain.close()
