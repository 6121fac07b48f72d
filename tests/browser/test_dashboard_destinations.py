"""A form's mail recipients and webhooks in Chromium, as an owner meets them: add a
recipient and send it a test mail (parked while no mail server is set, then delivered
to a local SMTP server by the real `intake relay`); add a webhook pointing at a local
receiver, read its secret once, send a test event that fails, retry it from the
delivery log and see it delivered. Each screen is checked with axe."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page

from tests.browser.axe import assert_accessible
from tests.browser.conftest import LOG_TAIL, Service, assert_real_png
from tests.support.processes import clean_env, run_cli
from tests.support.receiver import Receiver
from tests.support.smtp_server import SmtpServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "correct horse battery staple"
RECIPIENT = "team@example.com"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A service of its own: its webhooks may point at the local receiver."""
    home = tmp_path_factory.mktemp("destinations")
    env = clean_env(
        INTAKE_DATABASE_URL=f"sqlite:///{home / 'intake.db'}",
        INTAKE_WEBHOOK_ALLOW_PRIVATE="true",  # the receiver is plain http on 127.0.0.1
    )
    running = Service(env, home / "serve.log", stop_signal=signal.SIGINT, log_tail=LOG_TAIL)
    with running:
        yield running
    assert running.returncode == 0, running.tail()


def _relay(service: Service, smtp: SmtpServer | None = None) -> dict[str, Any]:
    """One round of the real relay, a process on the service's database."""
    env = dict(service.env)
    if smtp is not None:
        env["INTAKE_SMTP_URL"] = smtp.url
    return run_cli(env, "relay", "--once")


def _owner_signs_in(service: Service, page: Page, email: str) -> str:
    """A workspace with a form, its owner (`email`) signed in; the form's id."""
    workspace = service.intake("workspace", "create", "--name", "Studio")
    form = service.create_form(workspace["workspace_id"], "--name", "Contact")
    created = service.intake(
        "user", "create", "--email", email,
        "--workspace", workspace["workspace_id"], "--role", "owner",
    )  # fmt: skip
    page.goto(service.base + urlsplit(created["sign_in_link"]).path)
    page.fill("#password", PASSWORD)
    page.fill("#confirm", PASSWORD)
    page.get_by_role("button", name="Set password and sign in").click()
    page.wait_for_url(service.base + "/dashboard")
    form_id: str = form["form_id"]
    return form_id


def _shot(page: Page, path: Path) -> None:
    page.screenshot(path=str(path))
    assert_real_png(path)


def _fits_a_phone(page: Page) -> None:
    """At 360 px wide nothing is cut off: the page scrolls down, never sideways."""
    size = page.viewport_size
    assert size is not None
    page.set_viewport_size({"width": 360, "height": 640})
    try:
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
    finally:
        page.set_viewport_size(size)


def test_an_owner_adds_a_recipient_and_sends_it_a_test_mail(
    service: Service, page: Page, smtp: SmtpServer, tmp_path: Path
) -> None:
    # The owner's own address: a signed-in member's is confirmed at once (another address
    # would wait for its owner to confirm, and get no test until then).
    form_id = _owner_signs_in(service, page, RECIPIENT)
    page.goto(f"{service.base}/dashboard/forms/{form_id}")
    page.get_by_role("navigation", name="Form").get_by_role("link", name="Mail").click()
    assert_accessible(page)

    page.fill("#recipient-email", RECIPIENT)
    page.get_by_role("button", name="Add recipient").click()
    page.wait_for_load_state()
    assert page.locator("table.destinations").inner_text().count(RECIPIENT) == 1
    page.get_by_role("button", name=f"Send a test to {RECIPIENT}").click()
    page.wait_for_load_state()
    assert "queued" in page.locator("#test").inner_text()
    assert _relay(service)["dead"] == 1  # no mail server: parked, as all mail is
    page.reload()
    assert "not sent: no SMTP server is configured" in page.locator("#test").inner_text()
    assert_accessible(page)

    # A second test within the minute would be throttled: the parked one is retried.
    page.get_by_role("button", name="Retry the test mail").click()
    page.wait_for_load_state()
    assert _relay(service, smtp)["delivered"] == 1
    page.reload()
    _shot(page, tmp_path / "mail.png")

    assert "accepted by the mail server" in page.locator("#test").inner_text()
    _fits_a_phone(page)
    [mail] = smtp.messages
    assert mail.rcpt_tos == (RECIPIENT,)
    assert mail.message["Subject"] == "Test mail from Contact"


def test_an_owner_adds_a_webhook_sees_its_secret_once_and_retries_a_test_event(
    service: Service, page: Page, receiver: Receiver, tmp_path: Path
) -> None:
    form_id = _owner_signs_in(service, page, "hook-owner@example.com")
    page.goto(f"{service.base}/dashboard/forms/{form_id}/settings/webhooks")
    assert_accessible(page)

    page.fill("#webhook-url", receiver.url())
    page.get_by_label("Also send submission.flagged").check()
    page.get_by_role("button", name="Add endpoint").click()
    page.wait_for_load_state()
    secret = page.locator(".notice code.secret").inner_text()
    assert secret.startswith("whsec_")
    _shot(page, tmp_path / "webhook-secret.png")
    assert_accessible(page)
    assert "created=" in page.url
    assert secret not in page.url
    # A reload, or Back then Forward, of the answer page adds nothing and shows nothing.
    page.reload()
    assert secret not in page.content()
    assert "was shown once, when it was added" in page.content()
    page.go_back()
    page.go_forward()
    assert secret not in page.content()
    assert page.locator("table.destinations tbody tr").count() == 1
    assert len(service.intake("webhook", "list", "--form", form_id)["endpoints"]) == 1
    page.goto(f"{service.base}/dashboard/forms/{form_id}/settings/webhooks")
    assert secret not in page.content()  # never again
    assert receiver.url() in page.locator("table.destinations").inner_text()
    _fits_a_phone(page)

    page.get_by_role("link", name="Deliveries of endpoint 1").click()
    page.wait_for_load_state()
    page.get_by_role("button", name="Send a test event").click()
    page.wait_for_load_state()
    assert "webhook.test · pending" in page.locator("article").inner_text()
    receiver.statuses = [500]
    assert _relay(service)["failed"] == 1
    page.reload()
    assert "HTTP 500" in page.locator("article").inner_text()
    page.get_by_role("button", name="Retry webhook.test delivery 1").click()
    page.wait_for_load_state()
    assert _relay(service)["delivered"] == 1
    page.reload()
    _shot(page, tmp_path / "webhook-log.png")
    assert_accessible(page)

    _fits_a_phone(page)
    log = page.locator("article").inner_text()
    assert "webhook.test · delivered" in log
    assert len(receiver.requests) == 2
    assert receiver.requests[-1].headers["webhook-id"] == receiver.requests[0].headers["webhook-id"]
