"""A suspended workspace in Chromium, as its owner meets it: the pages still show what
it holds, but adding a recipient answers a page (axe-checked) saying the workspace is
suspended, and nothing is added."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.browser.axe import assert_accessible
from tests.browser.conftest import Service
from tests.browser.test_dashboard_destinations import _owner_signs_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]


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
