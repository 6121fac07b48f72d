"""A notification recipient's consent in Chromium, as each side meets it: the owner adds
a stranger's address and sees it waiting, with no test to send; the stranger gets one
mail (through the real `intake relay`), opens its link, reads what is asked (axe-checked)
and confirms; the owner's page then shows the address confirmed."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page

from tests.browser.axe import assert_accessible
from tests.browser.conftest import LOG_TAIL, Service
from tests.browser.test_dashboard_destinations import _owner_signs_in, _relay
from tests.support.processes import clean_env
from tests.support.smtp_server import SmtpServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STRANGER = "stranger@example.com"
LINK = re.compile(r"https?://\S+(/dashboard/notifications/[A-Za-z0-9]+)")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    home = tmp_path_factory.mktemp("consent")
    env = clean_env(INTAKE_DATABASE_URL=f"sqlite:///{home / 'intake.db'}")
    running = Service(env, home / "serve.log", stop_signal=signal.SIGINT, log_tail=LOG_TAIL)
    with running:
        yield running
    assert running.returncode == 0, running.tail()


def test_a_stranger_confirms_on_the_page_the_one_mail_links_to(
    service: Service, page: Page, smtp: SmtpServer, tmp_path: Path
) -> None:
    form_id = _owner_signs_in(service, page, "consent-owner@example.com")
    mail_page = f"{service.base}/dashboard/forms/{form_id}/settings/mail"
    page.goto(mail_page)
    page.fill("#recipient-email", STRANGER)
    page.get_by_role("button", name="Add recipient").click()
    page.wait_for_load_state()
    table = page.locator("table.destinations").inner_text()
    assert "Waiting for the address to confirm" in table
    assert page.get_by_role("button", name=f"Send a test to {STRANGER}").count() == 0

    assert _relay(service, smtp)["delivered"] == 1
    [asking] = smtp.messages
    assert asking.rcpt_tos == (STRANGER,)
    body = asking.message.get_body(("plain",))
    assert body is not None
    found = LINK.search(body.get_content())
    assert found is not None

    page.goto(service.base + urlsplit(found.group(0)).path)
    assert "was added to the notifications of the form Contact" in page.inner_text("main")
    assert_accessible(page)
    page.get_by_role("button", name="Confirm: send me these mails").click()
    page.wait_for_load_state()
    assert page.get_by_role("heading", name="Confirmed").count() == 1
    assert_accessible(page)

    page.goto(mail_page)
    assert "Confirmed" in page.locator("table.destinations").inner_text()
    assert page.get_by_role("button", name=f"Send a test to {STRANGER}").count() == 1
