"""The dashboard's defences, checked in Chromium: another site's page cannot post a change
with the user's cookie (CSRF), nor frame the dashboard (clickjacking); a user of one
workspace finds nothing of another's by id; markup in field names, values, the subject
and file names stays inert; and a cookie planted before sign-in never becomes a session.
(test_dashboard.py has the first hostile values and the sign-in enumeration check.)"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import BROWSER_TIMEOUT_MS, Service, Site
from tests.browser.dashboard_steps import (
    Dialogs,
    csrf_of,
    only_the_dashboards_script,
    shot,
    sign_in,
    sign_in_with_the_link,
    submit,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SESSION_COOKIE = "intake_session"
# A minimal well-formed PDF: a form accepting PDFs takes it by its content.
PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
HOSTILE_FIELDS = {
    "<img src=x onerror=alert('field-name')>": "<svg onload=alert('value')>",
    "homepage": "javascript:alert('url')",
    "site": "https://example.com/\"><script>alert('link')</script>",
    "_subject": "<script>alert('subject')</script>",
}
HOSTILE_FILE = "\"><img src=x onerror=alert('file')>.pdf"


def _auto_post(action: str) -> str:
    """Another site's page that posts a form to `action` as soon as it loads."""
    return (
        "<!doctype html><title>Win a prize</title>"
        f'<form id="f" method="post" action="{action}">'
        '<input type="hidden" name="csrf" value="guessed">'
        '<input type="hidden" name="confirm" value="yes"></form>'
        "<script>document.getElementById('f').submit()</script>"
    )


def test_another_sites_page_cannot_post_with_the_users_cookie(
    service: Service, workspace_id: str, site: Site, page: Page, tmp_path: Path
) -> None:
    form = service.create_form(workspace_id, "--name", "Target")
    victim = submit(service, form["public_form_key"], {"message": "keep me"})
    sign_in_with_the_link(service, page, workspace_id, "victim@example.com")

    for action in ("spam", "delete"):
        url = f"{service.base}/dashboard/submissions/{victim}/{action}"
        # The foreign origin shares the service's host, so the Lax cookie goes along.
        attack = (
            site.foreign_origin
            + site.put(f"/prize-{action}.html", _auto_post(url))[len(site.origin) :]
        )
        with page.expect_response(lambda r: r.request.method == "POST") as posted:
            page.goto(attack)
        page.wait_for_load_state()
        assert posted.value.status == 403, (action, posted.value.status)
    shot(page, tmp_path, "csrf-refused")

    (kept,) = service.submissions(form["form_id"])
    assert kept["status"] == "accepted"


def test_the_dashboard_cannot_be_framed(
    service: Service, workspace_id: str, site: Site, page: Page, tmp_path: Path
) -> None:
    sign_in_with_the_link(service, page, workspace_id, "framed@example.com")
    framing = site.put(
        "/frame.html",
        "<!doctype html><title>Click me</title><h1>Click the button below to win</h1>"
        "<p>A page of another site, laying the dashboard under its own buttons.</p>"
        f'<iframe src="{service.base}/dashboard" title="bait" width="700" height="400">'
        "</iframe><p><button>Claim the prize</button></p>",
    )
    with page.expect_response(f"{service.base}/dashboard") as framed:
        page.goto(framing)
    page.wait_for_load_state()
    shot(page, tmp_path, "framing-refused")

    assert framed.value.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in framed.value.headers["content-security-policy"]
    (child,) = page.main_frame.child_frames
    assert not child.url.startswith(service.base)
    assert "Sign out" not in child.content()
    assert "framed@example.com" not in child.content()


def test_a_user_of_one_workspace_finds_nothing_of_another_by_id(
    service: Service, workspace_id: str, page: Page, tmp_path: Path
) -> None:
    other = service.intake("workspace", "create", "--name", "Other people")["workspace_id"]
    theirs = service.create_form(other, "--name", "Theirs", "--upload-type", "application/pdf")
    their_submission = submit(
        service,
        theirs["public_form_key"],
        {"message": "private"},
        files={"cv": ("cv.pdf", PDF, "application/pdf")},
    )
    their_key = service.intake("key", "create", "--workspace", other, "--scope", "read")
    sign_in_with_the_link(service, page, workspace_id, "outsider@example.com")

    for path in (
        f"/dashboard/forms/{theirs['form_id']}",
        f"/dashboard/forms/{theirs['form_id']}/export?format=csv",
        f"/dashboard/submissions/{their_submission}",
        f"/dashboard/submissions/{their_submission}/delete",
    ):
        answer = page.goto(service.base + path)
        assert answer is not None
        assert answer.status == 404, path
        assert "private" not in page.content()
    shot(page, tmp_path, "other-workspace-not-found")
    # Their file is served by signed link only: the session cookie opens nothing.
    file = page.request.get(f"{service.base}/v1/files/{their_submission}/0")
    assert file.status in (401, 403, 404)
    assert PDF not in file.body()

    page.goto(f"{service.base}/dashboard/settings")
    revoke = page.request.post(
        f"{service.base}/dashboard/settings/keys/revoke",
        form={
            "csrf": csrf_of(page),
            "workspace": workspace_id,
            "key": their_key["key_id"],
            "confirm": "yes",
        },
        max_redirects=0,
    )
    assert revoke.status == 404
    bearer = {"Authorization": f"Bearer {their_key['api_key']}"}
    assert httpx.get(f"{service.base}/v1/forms", headers=bearer).status_code == 200
    (found,) = service.submissions(theirs["form_id"])
    assert found["status"] == "accepted"


def test_markup_in_names_values_subjects_and_file_names_stays_text(
    service: Service, workspace_id: str, page: Page, tmp_path: Path
) -> None:
    form = service.create_form(
        workspace_id, "--name", "Hostile files", "--upload-type", "application/pdf"
    )
    submission_id = submit(
        service,
        form["public_form_key"],
        HOSTILE_FIELDS,
        files={"cv": (HOSTILE_FILE, PDF, "application/pdf")},
    )
    dialogs = Dialogs(page)
    sign_in_with_the_link(service, page, workspace_id, "reader@example.com")

    page.goto(f"{service.base}/dashboard/forms/{form['form_id']}")
    shot(page, tmp_path, "hostile-inbox")
    page.locator("table.inbox tbody a").first.click()
    page.wait_for_load_state()
    shot(page, tmp_path, "hostile-submission")

    assert submission_id in page.locator("h1").inner_text()
    text = page.locator("main").inner_text()
    names = [name for name in HOSTILE_FIELDS if name != "_subject"]  # the subject's row
    # The file name as the upload carried it (a quote is percent-encoded there).
    for shown in (*names, *HOSTILE_FIELDS.values(), HOSTILE_FILE.removeprefix('"')):
        assert shown in text, shown
    assert dialogs.seen == []
    only_the_dashboards_script(page)
    assert page.locator("img, svg[onload], [onerror], [onload]").count() == 0
    assert page.locator("a[href^='javascript:' i]").count() == 0
    # Every link that is not the dashboard's own leads to submitted content: never a
    # live link without rel="noopener noreferrer nofollow".
    for anchor in page.locator("a").all():
        href = anchor.get_attribute("href") or ""
        if href.startswith(("/dashboard", "mailto:", "#main")):  # #main: the skip link
            continue
        rel = set((anchor.get_attribute("rel") or "").split())
        assert {"noopener", "noreferrer", "nofollow"} <= rel, href
        assert urlsplit(href).path.startswith("/v1/files/"), href  # the file, a download


def test_a_long_unbroken_name_wraps_on_a_phone(service: Service, page: Page) -> None:
    """A name nobody can break (190 letters, given through the API or the command) wraps
    where it is shown, as every value a visitor sent does: no page of the form scrolls
    sideways at 390 px."""
    page.set_viewport_size({"width": 390, "height": 844})
    long_name = "W" * 190
    workspace_id = service.intake("workspace", "create", "--name", long_name)["workspace_id"]
    form = service.create_form(workspace_id, "--name", long_name)
    submission_id = submit(service, form["public_form_key"], {"k" * 60: "v" * 400})
    sign_in_with_the_link(service, page, workspace_id, "long-name@example.com")

    for path in (
        "/dashboard",
        f"/dashboard/forms/{form['form_id']}",
        f"/dashboard/forms/{form['form_id']}/settings",
        f"/dashboard/forms/{form['form_id']}/settings/delete",
        f"/dashboard/submissions/{submission_id}",
    ):
        page.goto(service.base + path)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path


def test_a_cookie_planted_before_sign_in_never_becomes_a_session(
    service: Service, workspace_id: str, browser: Browser, page: Page
) -> None:
    sign_in_with_the_link(service, page, workspace_id, "fixed@example.com")
    host = urlsplit(service.base).hostname
    assert host is not None
    # One where the dashboard keeps its own, one for the whole host (sent after it).
    planted = [
        {"name": SESSION_COOKIE, "value": f"ses_planted{n}", "domain": host, "path": path}
        for n, path in enumerate(("/dashboard", "/"))
    ]
    context = browser.new_context()
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    try:
        context.add_cookies(planted)  # type: ignore[arg-type]
        victim = context.new_page()
        assert sign_in(service, victim, "fixed@example.com") == 303
        assert urlsplit(victim.url).path == "/dashboard"
        own = {c["path"]: c["value"] for c in context.cookies() if c["name"] == SESSION_COOKIE}
        assert own["/dashboard"] != "ses_planted0"  # replaced at sign-in
        victim.goto(f"{service.base}/dashboard/settings")
        assert urlsplit(victim.url).path == "/dashboard/settings"  # not hidden by "/"
    finally:
        context.close()

    attacker = browser.new_context()
    attacker.set_default_timeout(BROWSER_TIMEOUT_MS)
    try:
        attacker.add_cookies(planted)  # type: ignore[arg-type]
        stolen = attacker.new_page()
        stolen.goto(f"{service.base}/dashboard")
        assert urlsplit(stolen.url).path == "/dashboard/sign-in"
    finally:
        attacker.close()
