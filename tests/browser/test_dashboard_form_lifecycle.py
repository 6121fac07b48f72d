"""Forms made and unmade in Chromium, as a new owner goes: the first steps on an empty
workspace, a new form named on the Forms page and its settings with the HTML to paste,
a copy, and a deletion refused for a wrong name then done for the right one; each step
ticking itself off. axe-core finds nothing on any of these screens, at 1280 and 390 px
wide, and at 390 px nothing scrolls sideways."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, ViewportSize

from tests.browser.axe import axe_violations, describe
from tests.browser.conftest import Service, assert_real_png
from tests.browser.dashboard_steps import sign_in_with_the_link, submit

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}


def shot(page: Page, folder: Path, name: str) -> None:
    """A screenshot of what the owner sees now, checked to show something."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    size = page.viewport_size
    assert size is not None
    assert_real_png(path, (size["width"], size["height"]))


def _clean(page: Page) -> None:
    """No axe violation at all, of any impact; nothing wider than the viewport."""
    violations = axe_violations(page)
    assert not violations, describe(violations)
    width = page.viewport_size["width"] if page.viewport_size else 0
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def _click(page: Page, name: str) -> None:
    page.get_by_role("button", name=name).click()
    page.wait_for_load_state()


def _steps(page: Page) -> dict[str, bool]:
    items = page.locator(".checklist li")
    return {
        items.nth(i).inner_text().split(":")[0].lstrip("✓○ ").strip(): (
            items.nth(i).get_attribute("class") == "done"
        )
        for i in range(items.count())
    }


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_a_new_owner_makes_copies_and_deletes_a_form(
    service: Service, page: Page, tmp_path: Path, viewport: ViewportSize
) -> None:
    width = viewport["width"]
    page.set_viewport_size(viewport)
    workspace_id = service.intake("workspace", "create", "--name", f"First steps {width}")[
        "workspace_id"
    ]
    sign_in_with_the_link(service, page, workspace_id, f"new-owner-{width}@example.com")
    page.goto(f"{service.base}/dashboard")
    assert _steps(page) == {
        "Create a form": False,
        "Put its HTML on your site and send a test submission": False,
        "Add a notification": False,
    }
    _clean(page)
    shot(page, tmp_path, f"first-steps-{width}")

    page.get_by_label("New form's name").fill("Contact us")
    _click(page, "New form")
    assert urlsplit(page.url).path.endswith("/settings")
    assert "Form created." in page.get_by_role("status").inner_text()
    form_id = urlsplit(page.url).path.split("/")[3]
    key = service.intake("form", "show", form_id)["public_form_key"]
    assert f"{service.base}/f/{key}" in page.input_value("#snippet-text")
    _clean(page)
    shot(page, tmp_path, f"new-form-{width}")

    _click(page, "Duplicate the form")
    assert "Form duplicated" in page.get_by_role("status").inner_text()
    copy_id = urlsplit(page.url).path.split("/")[3]
    assert copy_id != form_id
    assert service.intake("form", "show", copy_id)["name"] == "Contact us (copy)"
    _clean(page)

    page.get_by_role("link", name="Delete the form…").click()
    page.wait_for_load_state()
    _clean(page)
    page.get_by_label("Type Contact us (copy) to delete the form").fill("Contact us")
    _click(page, "Delete the form")
    assert "nothing was deleted" in page.get_by_role("alert").inner_text()
    assert page.locator("#confirm").get_attribute("aria-invalid") == "true"
    _clean(page)
    shot(page, tmp_path, f"delete-refused-{width}")
    page.fill("#confirm", "Contact us (copy)")
    _click(page, "Delete the form")
    assert urlsplit(page.url).path == "/dashboard"
    assert "Form deleted" in page.get_by_role("status").inner_text()
    assert "Contact us (copy)" not in page.locator("main").inner_text()
    _clean(page)

    submit(service, key, {"message": "Is this thing on?"})
    page.reload()
    steps = _steps(page)
    assert steps["Create a form"]
    assert steps["Put its HTML on your site and send a test submission"]
    assert not steps["Add a notification"]
    shot(page, tmp_path, f"steps-ticked-{width}")
    service.intake("notify", "add", "--form", form_id, "--email", "team@example.com")
    page.reload()
    assert page.locator(".checklist").count() == 0, "every step done: the list is gone"
