"""A right-to-left override in what a visitor typed cannot pass for something else, as
Chromium lays the dashboard out: `{"name": "Invoice \\u202egnp.exe", "note": "after"}`
reads in the order typed, in the inbox and on the submission's page (each value in a
direction isolate, so the override reorders nothing after it), and the submission's
page shows the override as a marker. At 1280 and 390 px wide, light and dark, with no
accessibility violation."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Literal

import pytest
from playwright.sync_api import Locator, Page

from tests.browser.axe import axe_violations, describe
from tests.browser.conftest import Service, assert_real_png
from tests.browser.dashboard_steps import sign_in_with_the_link, submit

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SPOOF = {"name": "Invoice \u202egnp.exe", "note": "after"}
WIDTHS = (1280, 390)
SCHEMES: tuple[Literal["light", "dark"], ...] = ("light", "dark")

# Where a piece of text is drawn: the rectangle of the first occurrence of `needle` in
# the element's text nodes, found through a Range over its logical characters.
_RECT_OF = """([element, needle]) => {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.indexOf(needle);
    if (at >= 0) {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + needle.length);
      const r = range.getBoundingClientRect();
      return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    }
  }
  return null;
}"""


def _rect(where: Locator, needle: str) -> dict[str, float]:
    found = where.evaluate(f"(element) => ({_RECT_OF})([element, {needle!r}])")
    assert found is not None, f"{needle!r} is not in {where}"
    rect: dict[str, float] = found
    return rect


def _reads_in_order(where: Locator, *pieces: str) -> None:
    """Each piece is drawn after the one before: to its right on the same line, or on
    a line below (the text wraps on a phone)."""
    drawn = [(piece, _rect(where, piece)) for piece in pieces]
    for (before, earlier), (after, later) in itertools.pairwise(drawn):
        below = later["top"] >= earlier["bottom"] - 1
        assert below or later["left"] >= earlier["right"] - 1, (
            f"{after!r} {later} is not drawn after {before!r} {earlier}"
        )


def _isolated(values: Locator) -> None:
    assert values.count() > 0
    for index in range(values.count()):
        value = values.nth(index)
        assert value.evaluate("(e) => getComputedStyle(e).unicodeBidi") == "isolate"


def _accessible(page: Page) -> None:
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.fixture
def signed_in(service: Service, workspace_id: str, page: Page) -> tuple[str, str]:
    """A form with the spoofing submission, and its owner signed in on `page`; the
    form's and the submission's ids."""
    form = service.create_form(workspace_id, "--name", "Invoices")
    submission_id = submit(service, form["public_form_key"], SPOOF)
    sign_in_with_the_link(service, page, workspace_id, "bidi@example.com")
    return form["form_id"], submission_id


def _accessible_and_shown(page: Page, shot: Path) -> None:
    """No accessibility violation, and a screenshot that shows something."""
    _accessible(page)
    page.screenshot(path=str(shot))
    size = page.viewport_size
    assert size is not None
    assert_real_png(shot, (size["width"], size["height"]))


def test_an_override_reorders_nothing_in_the_inbox_or_on_the_submission_page(
    service: Service, page: Page, signed_in: tuple[str, str], tmp_path: Path
) -> None:
    """Each page is loaded once at each width, and seen in either scheme as the system's
    setting switches it."""
    form_id, submission_id = signed_in
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        page.goto(f"{service.base}/dashboard/forms/{form_id}")
        for scheme in SCHEMES:
            page.emulate_media(color_scheme=scheme)
            row = page.locator("table.inbox tbody tr a").first
            assert row.inner_text() == "name: Invoice ⟨U+202E⟩gnp.exe · note: after"
            _isolated(row.locator("bdi"))
            _reads_in_order(row, "name", "Invoice", "⟨U+202E⟩", "gnp.exe", "note", "after")
            _accessible_and_shown(page, tmp_path / f"inbox-{width}-{scheme}.png")

        page.goto(f"{service.base}/dashboard/submissions/{submission_id}")
        for scheme in SCHEMES:
            page.emulate_media(color_scheme=scheme)
            fields = page.locator("dl.fields")
            marker = fields.locator(".invisible-char")
            assert marker.inner_text() == "⟨U+202E⟩"
            assert marker.is_visible()
            assert marker.get_attribute("title") == "U+202E RIGHT-TO-LEFT OVERRIDE"
            assert "name\nInvoice ⟨U+202E⟩gnp.exe\nnote\nafter" in fields.inner_text()
            _isolated(fields.locator("bdi"))
            _reads_in_order(fields.locator("dd").first, "Invoice", "⟨U+202E⟩", "gnp.exe")
            _reads_in_order(fields, "name", "note")
            _reads_in_order(fields, "gnp.exe", "after")
            _accessible_and_shown(page, tmp_path / f"submission-{width}-{scheme}.png")
