"""An owner invites a member from the Members screen (no mail server: the owner is told
it waits for them); the member, a user made by the operator, signs in in a browser of
their own, accepts it on their Forms page, and is refused every owner-only screen and
action (403), while the owner reaches them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import BROWSER_TIMEOUT_MS, Service
from tests.browser.dashboard_steps import (
    csrf_of,
    set_password_by_link,
    shot,
    sign_in,
    sign_in_with_the_link,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MEMBERS = "/dashboard/settings/members"
# A form's settings screens, owners' only.
FORM_SETTINGS = ("/settings", "/settings/mail", "/settings/webhooks")


@pytest.fixture
def member_page(browser: Browser) -> Iterator[Page]:
    """A browser of the member's own: no cookie of the owner's."""
    context = browser.new_context(viewport={"width": 800, "height": 600})
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


def _status(page: Page, url: str) -> int:
    answer = page.goto(url)
    assert answer is not None
    return answer.status


def test_an_invited_member_signs_in_and_cannot_open_owner_screens(
    service: Service, page: Page, member_page: Page, tmp_path: Path
) -> None:
    workspace_id = service.intake("workspace", "create", "--name", "Team")["workspace_id"]
    form = service.create_form(workspace_id, "--name", "Team form")
    sign_in_with_the_link(service, page, workspace_id, "lead@example.com")

    page.get_by_role("link", name="Members", exact=True).click()
    page.fill("#email-1", "new.member@example.com")
    page.select_option("#role-1", "member")
    page.get_by_role("button", name="Invite").click()
    page.wait_for_load_state()
    shot(page, tmp_path, "13-invited")
    notice = page.locator(".notice").inner_text()
    assert "No mail server is set up" in notice
    assert "/dashboard/sign-in/" not in page.content()  # no link reaches the inviter

    # The operator gave the member an account elsewhere; signed in, they accept.
    elsewhere = service.intake("workspace", "create", "--name", "Elsewhere")["workspace_id"]
    made = service.intake(
        "user", "create", "--email", "new.member@example.com", "--workspace", elsewhere
    )
    set_password_by_link(service, member_page, made["sign_in_link"])
    assert urlsplit(member_page.url).path == "/dashboard"
    assert "Team form" not in member_page.locator("main").inner_text()
    member_page.get_by_role("button", name="Accept the invitation to Team").click()
    member_page.wait_for_load_state()
    member_page.get_by_role("button", name="Sign out").click()
    member_page.wait_for_load_state()
    assert sign_in(service, member_page, "new.member@example.com") == 303  # then /dashboard
    assert urlsplit(member_page.url).path == "/dashboard", member_page.content()
    assert "Team form" in member_page.locator("main").inner_text()
    shot(member_page, tmp_path, "14-member-forms")

    # Members: read, with no invitation, role or removal controls, only their own Leave;
    # posting the owners' ones is refused.
    member_page.get_by_role("link", name="Members", exact=True).click()
    member_page.wait_for_load_state()
    shot(member_page, tmp_path, "15-member-members")
    assert "lead@example.com" in member_page.locator("main").inner_text()
    main = member_page.locator("main")
    assert [b.inner_text() for b in main.get_by_role("button").all()] == ["Leave", "Leave"]
    token = csrf_of(member_page)
    lead = service.intake("user", "list", "--workspace", workspace_id)["users"]
    lead_id = next(u["user_id"] for u in lead if u["email"] == "lead@example.com")
    owner_posts = {
        MEMBERS + "/invite": {"email": "third@example.com", "role": "owner"},
        MEMBERS + "/remove": {"user": lead_id},
        MEMBERS + "/role": {"user": lead_id, "role": "member"},
        "/dashboard/settings/keys": {"scopes": "manage"},
    }
    for path, fields in owner_posts.items():
        answer = member_page.request.post(
            service.base + path,
            form={"csrf": token, "workspace": workspace_id, **fields},
            max_redirects=0,
        )
        assert answer.status == 403, (path, answer.status)

    # Settings: usage and keys read, no key creation.
    member_page.get_by_role("link", name="Settings", exact=True).click()
    member_page.wait_for_load_state()
    assert member_page.get_by_role("button", name="Create key").count() == 0

    # A form's settings: the owner's screens, refused to the member.
    for suffix in FORM_SETTINGS:
        url = f"{service.base}/dashboard/forms/{form['form_id']}{suffix}"
        assert _status(page, url) == 200, url
        assert _status(member_page, url) == 403, url
        assert "could not be accepted" in member_page.locator("main").inner_text()
    shot(member_page, tmp_path, "16-member-refused")
    users = service.intake("user", "list", "--workspace", workspace_id)["users"]
    assert sorted(u["email"] for u in users) == ["lead@example.com", "new.member@example.com"]

    # The owner makes the member an owner: their next page has the owner's controls.
    page.goto(service.base + MEMBERS)
    page.get_by_label("Role of new.member@example.com", exact=True).select_option("owner")
    page.get_by_role("button", name="Change role of new.member@example.com").click()
    page.wait_for_load_state()
    shot(page, tmp_path, "17-role-changed")
    member_page.goto(service.base + MEMBERS)
    assert member_page.get_by_role("button", name="Invite").count() == 1
