"""A form's settings in Chromium, as an owner uses them: from the inbox to the settings,
a refused origin explained beside its field, name and origins saved, the form paused and
resumed, the public key rotated after the warning, and the new key copied out of the
snippet and used; axe-core on every screen, and the page at 360 px wide."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Page, ViewportSize

from tests.browser.axe import assert_accessible
from tests.browser.conftest import Service, assert_real_png
from tests.browser.dashboard_steps import sign_in_with_the_link

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOP = "https://shop.example"
NARROW: ViewportSize = {"width": 360, "height": 640}


def _click(page: Page, name: str) -> None:
    page.get_by_role("button", name=name).click()
    page.wait_for_load_state()


def _post(service: Service, key: str, origin: str = SHOP) -> httpx.Response:
    return httpx.post(
        f"{service.base}/f/{key}", json={"email": "ada@example.com"}, headers={"origin": origin}
    )


def test_an_owner_edits_pauses_and_rotates_a_form(
    service: Service, workspace_id: str, page: Page, tmp_path: Path
) -> None:
    form = service.create_form(workspace_id, "--name", "Settings walk")
    old_key = form["public_form_key"]
    sign_in_with_the_link(service, page, workspace_id, "settings-owner@example.com")
    page.goto(f"{service.base}/dashboard/forms/{form['form_id']}")
    page.get_by_role("navigation", name="Form").get_by_role("link", name="Settings").click()
    page.wait_for_load_state()
    assert urlsplit(page.url).path.endswith("/settings")
    assert_accessible(page)

    page.fill("#name", "Quote requests")
    page.fill("#allowed_origins", "not an origin")
    _click(page, "Save settings")
    assert page.locator("#allowed_origins-error").is_visible()
    assert page.locator("#allowed_origins").get_attribute("aria-invalid") == "true"
    assert page.input_value("#name") == "Quote requests"  # what was typed is kept
    assert_accessible(page)
    page.fill("#allowed_origins", SHOP)
    _click(page, "Save settings")
    assert page.get_by_role("status").inner_text() == "Settings saved."
    shown = service.intake("form", "show", form["form_id"])
    assert (shown["name"], shown["allowed_origins"]) == ("Quote requests", [SHOP])
    screenshot = tmp_path / "form-settings.png"
    page.screenshot(path=str(screenshot))
    assert_real_png(screenshot)

    _click(page, "Pause the form")
    assert _post(service, old_key).json()["error"]["code"] == "form_disabled"
    assert_accessible(page)
    _click(page, "Resume the form")
    assert _post(service, old_key).status_code == 201
    assert _post(service, old_key, origin="https://evil.example").status_code == 403

    page.get_by_role("link", name="Rotate the public key…").click()
    page.wait_for_load_state()
    assert "stops working at once" in page.locator("main").inner_text()
    assert_accessible(page)
    _click(page, "Rotate the key now")
    new_key = page.locator("#public-key").inner_text()
    snippet = page.input_value("#snippet-text")
    assert f'action="{service.base}/f/{new_key}"' in snippet
    assert_accessible(page)
    assert _post(service, old_key).status_code == 404
    assert _post(service, new_key).status_code == 201

    page.set_viewport_size(NARROW)
    page.goto(f"{service.base}/dashboard/forms/{form['form_id']}/settings")
    assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
    assert_accessible(page)
