"""Steps the dashboard's browser tests share: signing in as a person does (a one-time
link, or the sign-in form), submitting to a form as a visitor's site would, screenshots
that must show something, and a watch for dialogs that hostile content might open."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import Dialog, Page

from intake.entrypoints.http.dashboard.static_files import static_url
from tests.browser.conftest import Service, assert_real_png

PASSWORD = "correct horse battery staple"


def sign_in_with_the_link(
    service: Service, page: Page, workspace_id: str, email: str, role: str = "owner"
) -> None:
    """A new user made by `intake user create`, who opens their link and sets a password."""
    created = service.intake(
        "user", "create", "--email", email, "--workspace", workspace_id, "--role", role
    )
    set_password_by_link(service, page, created["sign_in_link"])


def set_password_by_link(service: Service, page: Page, link: str) -> None:
    # The link names the configured base address; the test's service listens elsewhere.
    page.goto(service.base + urlsplit(link).path)
    page.fill("#password", PASSWORD)
    page.fill("#confirm", PASSWORD)
    page.get_by_role("button").last.click()
    page.wait_for_load_state()


def sign_in(service: Service, page: Page, email: str, password: str = PASSWORD) -> int:
    """The sign-in form, typed and sent; the status of its answer to the post (303 when
    signed in)."""
    page.goto(f"{service.base}/dashboard/sign-in")
    page.fill("#email", email)
    page.fill("#password", password)
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.get_by_role("button").last.click()
    page.wait_for_load_state()
    return answer.value.status


def submit(
    service: Service,
    key: str,
    fields: Mapping[str, str],
    files: Mapping[str, tuple[str, bytes, str]] | None = None,
) -> str:
    """A visitor's submission (multipart when it has files); its id."""
    url = f"{service.base}/f/{key}"
    headers = {"Accept": "application/json"}
    if files:
        answer = httpx.post(url, data=dict(fields), files=dict(files), headers=headers)
    else:
        answer = httpx.post(url, json=dict(fields), headers=headers)
    assert answer.status_code == 201, answer.text
    submission_id: str = answer.json()["submission_id"]
    return submission_id


def shot(page: Page, folder: Path, name: str) -> Path:
    """A screenshot of what the user sees now, checked to show something."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    assert_real_png(path)
    return path


def only_the_dashboards_script(page: Page) -> None:
    """No script on the page but the dashboard's own file (an enhancement it serves
    itself): nothing inline, nothing a submitted value brought."""
    sources = page.evaluate("[...document.scripts].map((s) => s.getAttribute('src'))")
    assert sources in ([], [static_url("dashboard.js")]), sources
    assert page.evaluate("[...document.scripts].every((s) => s.text === '')")


def csrf_of(page: Page) -> str:
    """The CSRF token of the page shown (every signed-in page's sign-out form has one)."""
    token = page.locator("input[name=csrf]").first.get_attribute("value")
    assert token
    return token


class Dialogs:
    """Every dialog a page opens (alert, confirm, prompt), dismissed and recorded."""

    def __init__(self, page: Page) -> None:
        self.seen: list[str] = []
        page.on("dialog", self._seen)

    def _seen(self, dialog: Dialog) -> None:
        self.seen.append(dialog.message)
        dialog.dismiss()
