"""A suspended workspace in Chromium, as its owner meets it: the pages still show what
it holds, but adding a recipient answers a page (axe-checked) saying the workspace is
suspended, and nothing is added."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from tests.browser.axe import assert_accessible
from tests.browser.conftest import LOG_TAIL, Service
from tests.browser.test_dashboard_destinations import _owner_signs_in
from tests.support.processes import clean_env

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    home = tmp_path_factory.mktemp("suspended")
    env = clean_env(INTAKE_DATABASE_URL=f"sqlite:///{home / 'intake.db'}")
    running = Service(env, home / "serve.log", stop_signal=signal.SIGINT, log_tail=LOG_TAIL)
    with running:
        yield running
    assert running.returncode == 0, running.tail()


def test_a_suspended_workspaces_owner_reads_but_is_told_a_change_is_refused(
    service: Service, page: Page
) -> None:
    form_id = _owner_signs_in(service, page, "suspended-owner@example.com")
    workspace_id = service.intake("form", "show", form_id)["workspace_id"]
    service.intake("workspace", "suspend", workspace_id)
    mail_page = f"{service.base}/dashboard/forms/{form_id}/settings/mail"

    page.goto(mail_page)
    page.fill("#recipient-email", "stranger@example.com")
    page.get_by_role("button", name="Add recipient").click()
    page.wait_for_load_state()

    assert page.get_by_role("heading", name="This workspace is suspended").count() == 1
    assert_accessible(page)
    page.goto(mail_page)
    assert "No one is mailed about this form yet." in page.inner_text("main")
