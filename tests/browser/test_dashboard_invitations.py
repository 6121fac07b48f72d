"""Invitations in Chromium, on a service with a mail server: an owner invites a new
address and a user of another workspace, and is told the same for both; the new person
makes their account from the mailed link, which names the workspace and the inviter; the
existing user accepts on their Forms page, signed in as themselves, and later leaves.
axe-core finds no violation on any page of it."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.axe import axe_violations, describe
from tests.browser.conftest import (
    BROWSER_TIMEOUT_MS,
    LOG_TAIL,
    VIEWPORT_HEIGHT,
    VIEWPORT_WIDTH,
    Service,
)
from tests.browser.dashboard_steps import PASSWORD, set_password_by_link, shot
from tests.support.processes import clean_env, wait_for
from tests.support.smtp_server import SmtpServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MEMBERS = "/dashboard/settings/members"
INVITATION_LINK = re.compile(r"https?://\S+/dashboard/invitations/[0-9a-z]{39}")
MAIL_TIMEOUT = 10.0


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    with SmtpServer() as server:
        yield server


@pytest.fixture(scope="module")
def mailing_service(
    tmp_path_factory: pytest.TempPathFactory, smtp: SmtpServer
) -> Iterator[Service]:
    home = tmp_path_factory.mktemp("intake-invitations")
    env = clean_env(
        INTAKE_DATABASE_URL=f"sqlite:///{home / 'intake.db'}",
        INTAKE_SMTP_URL=smtp.url,
        INTAKE_MAIL_FROM="intake@team.example",
    )
    running = Service(env, home / "serve.log", stop_signal=signal.SIGINT, log_tail=LOG_TAIL)
    running.env["INTAKE_BASE_URL"] = running.base  # the mailed links name this address
    with running:
        yield running
    assert running.returncode == 0, running.tail()


def _browser_page(browser: Browser) -> Page:
    context = browser.new_context(viewport={"width": VIEWPORT_WIDTH, "height": VIEWPORT_HEIGHT})
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    return context.new_page()


def _no_violation(page: Page) -> None:
    found = axe_violations(page)
    assert not found, f"axe-core on {page.url}:\n{describe(found)}"


# When an invitation expires, to the second: two sent a moment apart may differ in it.
EXPIRY = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")


def _invite(page: Page, email: str) -> str:
    """What the owner is told, the address and the expiry's time taken out."""
    page.fill("#email-1", email)
    # The page the post leads to, not the one before it (which may show the last notice).
    with page.expect_navigation():
        page.get_by_role("button", name="Invite").click()
    notice = page.locator(".notice").inner_text()
    assert EXPIRY.search(notice), notice
    return " ".join(EXPIRY.sub("TIME", notice.replace(email, "ADDRESS")).split())


def _mailed_to(smtp: SmtpServer, address: str) -> str:
    def arrived() -> bool:
        return any(address in m.rcpt_tos for m in smtp.messages)

    wait_for(arrived, MAIL_TIMEOUT, f"the invitation to {address}", lambda: "")
    (mail,) = [m for m in smtp.messages if address in m.rcpt_tos]
    body = mail.message.get_content()
    assert "lead@team.example" in body
    assert '"Team Space"' in body
    found = INVITATION_LINK.search(body)
    assert found is not None
    return found.group(0)


def test_an_invitation_is_accepted_only_by_its_invitee(
    mailing_service: Service, smtp: SmtpServer, browser: Browser, tmp_path: Path
) -> None:
    service = mailing_service
    workspace_id = service.intake("workspace", "create", "--name", "Team Space")["workspace_id"]
    service.create_form(workspace_id, "--name", "Team form")
    elsewhere = service.intake("workspace", "create", "--name", "Elsewhere")["workspace_id"]
    lead = service.intake(
        "user", "create", "--email", "lead@team.example", "--workspace", workspace_id,
        "--role", "owner",
    )  # fmt: skip
    bob = service.intake(
        "user", "create", "--email", "bob@team.example", "--workspace", elsewhere,
        "--role", "owner",
    )  # fmt: skip
    owner, bobs, newcomers = (_browser_page(browser) for _ in range(3))
    set_password_by_link(service, owner, lead["sign_in_link"])
    set_password_by_link(service, bobs, bob["sign_in_link"])

    # The owner is told the same whoever the address is, and sees no link.
    owner.goto(service.base + MEMBERS)
    told = {_invite(owner, "new@team.example"), _invite(owner, "bob@team.example")}
    assert len(told) == 1, told
    assert "Invitation sent to ADDRESS" in told.pop()
    assert INVITATION_LINK.search(owner.content()) is None
    assert owner.get_by_role("button", name="Revoke the invitation to bob@team.example").count()
    _no_violation(owner)
    shot(owner, tmp_path, "invitations-pending")

    # The new address makes its account from the mailed link.
    newcomers.goto(service.base + urlsplit(_mailed_to(smtp, "new@team.example")).path)
    assert newcomers.locator("#email").input_value() == "new@team.example"
    assert newcomers.locator("#email").get_attribute("autocomplete") == "username"
    _no_violation(newcomers)
    newcomers.fill("#password", PASSWORD)
    newcomers.fill("#confirm", PASSWORD)
    newcomers.get_by_role("button", name="Make my account and join").click()
    newcomers.wait_for_load_state()
    assert urlsplit(newcomers.url).path == "/dashboard"
    assert "Team form" in newcomers.locator("main").inner_text()

    # Bob's link asks him to sign in; signed in, his Forms page offers the invitation.
    bobs.goto(service.base + urlsplit(_mailed_to(smtp, "bob@team.example")).path)
    assert urlsplit(bobs.url).path == "/dashboard"
    main = bobs.locator("main")
    assert "lead@team.example invited you as member" in main.inner_text()
    assert "Team form" not in main.inner_text()
    _no_violation(bobs)
    shot(bobs, tmp_path, "invitation-offered")
    bobs.get_by_role("button", name="Accept the invitation to Team Space").click()
    bobs.wait_for_load_state()
    assert "Team form" in bobs.locator("main").inner_text()

    # Nothing pending for the owner now; Bob leaves again.
    owner.goto(service.base + MEMBERS)
    assert "Pending invitations" not in owner.locator("main").inner_text()
    bobs.goto(service.base + MEMBERS)
    bobs.get_by_role("button", name="Leave Team Space").click()
    bobs.wait_for_load_state()
    assert urlsplit(bobs.url).path == "/dashboard"
    assert "Team form" not in bobs.locator("main").inner_text()
    users = service.intake("user", "list", "--workspace", workspace_id)["users"]
    assert sorted(u["email"] for u in users) == ["lead@team.example", "new@team.example"]


def test_a_used_invitation_link_says_so(mailing_service: Service, browser: Browser) -> None:
    page = _browser_page(browser)

    answer = page.goto(mailing_service.base + "/dashboard/invitations/not-a-real-one")

    assert answer is not None
    assert answer.status == 410
    assert page.get_by_role("heading", name="This invitation cannot be used").is_visible()
    _no_violation(page)


def _mails_to(smtp: SmtpServer, address: str) -> int:
    return sum(address in mail.rcpt_tos for mail in smtp.messages)


def test_reloading_after_an_invitation_sends_no_second_one(
    mailing_service: Service, smtp: SmtpServer, browser: Browser
) -> None:
    service = mailing_service
    workspace_id = service.intake("workspace", "create", "--name", "Reload Space")["workspace_id"]
    lead = service.intake(
        "user", "create", "--email", "reload.lead@team.example", "--workspace", workspace_id,
        "--role", "owner",
    )  # fmt: skip
    owner = _browser_page(browser)
    set_password_by_link(service, owner, lead["sign_in_link"])
    owner.goto(service.base + MEMBERS)

    told = _invite(owner, "once@team.example")
    assert "Invitation sent to ADDRESS" in told
    assert "sent=" in owner.url
    assert "once@team.example" not in owner.url
    wait_for(lambda: _mails_to(smtp, "once@team.example") == 1, MAIL_TIMEOUT, "the invitation", str)

    # A reload, or Back then Forward, of the page the invitation led to sends nothing
    # (the mail goes out before the post is answered) and says it no more.
    owner.reload()
    owner.wait_for_load_state()
    assert owner.locator(".notice").count() == 0
    owner.go_back()
    owner.go_forward()
    owner.wait_for_load_state()
    assert owner.locator(".notice").count() == 0
    assert owner.get_by_role("button", name="Revoke the invitation to once@team.example").count()
    assert _mails_to(smtp, "once@team.example") == 1
    (pending,) = owner.locator("table[aria-labelledby='pending-1'] tbody tr").all()
    assert "once@team.example" in pending.inner_text()
