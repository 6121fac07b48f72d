"""How the dashboard looks in Chromium: it follows the system's light or dark scheme; on
a 390 px phone the inbox is a list of cards whose bulk actions stay on the screen, and a
table on a desktop; and the screenshots of docs/dashboard.md, at 1280 and 390 px in both
schemes, written where INTAKE_DOCS_SCREENSHOTS says (`make screenshots`), else to a
temporary directory. axe and the page widths: test_dashboard_accessibility.py."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import assert_real_png
from tests.browser.dashboard_demo import Demo, running_demo

pytestmark = [pytest.mark.browser, pytest.mark.slow]

Scheme = Literal["light", "dark"]
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
SCHEMES: tuple[Scheme, ...] = ("light", "dark")
MAX_SHOT_BYTES = 150_000
# Relative luminance: the dark colour of a page (its background in dark, its text in
# light) is below the first, the light one above the second.
DARKEST, LIGHTEST = 0.05, 0.5


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[Demo]:
    with running_demo(tmp_path_factory.mktemp("dashboard-look"), browser) as running:
        yield running


def _page(demo: Demo, browser: Browser, size: str, scheme: Scheme, *, signed_in: bool) -> Page:
    width, height = SIZES[size]
    return demo.new_page(browser, width, height, signed_in=signed_in, scheme=scheme)


def _luminance(css_colour: str) -> float:
    """WCAG's relative luminance of an `rgb(...)` or `rgba(...)` computed colour."""
    red, green, blue = (int(part) / 255 for part in re.findall(r"[\d.]+", css_colour)[:3])

    def linear(channel: float) -> float:
        return channel / 12.92 if channel <= 0.03928 else ((channel + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


_COLOURS = """(selector) => {
  const style = getComputedStyle(document.querySelector(selector));
  return [style.backgroundColor, style.color];
}"""


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_pages_follow_the_systems_scheme(demo: Demo, browser: Browser, scheme: Scheme) -> None:
    """Dark means a dark page with light text, the cards and inputs dark too; light the
    reverse."""
    page = _page(demo, browser, "desktop", scheme, signed_in=True)
    page.goto(demo.url(f"/dashboard/forms/{demo.form_id}"))
    for selector in ("body", "main > section", "#q"):
        background, text = (_luminance(c) for c in page.evaluate(_COLOURS, selector))
        dark, light = (background, text) if scheme == "dark" else (text, background)
        assert dark < DARKEST, (scheme, selector, background, text)
        assert light > LIGHTEST, (scheme, selector, background, text)
    page.context.close()


_DISPLAYS = """() => [...document.querySelectorAll("table.inbox tbody tr")].map((row) => {
  const box = row.getBoundingClientRect();
  return {display: getComputedStyle(row).display, top: box.top, bottom: box.bottom,
          left: box.left, right: box.right};
})"""


def test_the_inbox_is_a_list_of_cards_on_a_phone(demo: Demo, browser: Browser) -> None:
    """Each submission a card: one under the other, each as wide as the screen allows, the
    table's header row hidden from sight (not from screen readers); in either scheme, as
    the system's setting switches it."""
    page = _page(demo, browser, "phone", "light", signed_in=True)
    page.goto(demo.url(f"/dashboard/forms/{demo.form_id}"))
    for scheme in SCHEMES:
        page.emulate_media(color_scheme=scheme)
        cards = page.evaluate(_DISPLAYS)
        assert len(cards) >= 2
        assert {card["display"] for card in cards} == {"grid"}
        for above, below in itertools.pairwise(cards):
            assert above["bottom"] <= below["top"]
        width = SIZES["phone"][0]
        assert all(card["left"] > 0 for card in cards)
        assert all(card["right"] < width for card in cards)
        assert all(card["right"] - card["left"] > width * 0.8 for card in cards)
        header = page.locator("table.inbox thead").bounding_box()
        assert header is not None
        assert header["width"] <= 1
        assert header["height"] <= 1
    page.context.close()


def test_the_inbox_is_a_table_on_a_desktop(demo: Demo, browser: Browser) -> None:
    page = _page(demo, browser, "desktop", "light", signed_in=True)
    page.goto(demo.url(f"/dashboard/forms/{demo.form_id}"))
    assert {card["display"] for card in page.evaluate(_DISPLAYS)} == {"table-row"}
    header = page.locator("table.inbox thead").bounding_box()
    assert header is not None
    assert header["width"] > SIZES["phone"][0]
    page.context.close()


def test_the_bulk_actions_stay_on_a_phones_screen(demo: Demo, browser: Browser) -> None:
    """With more cards than the screen holds, the bar with Apply sits at the bottom of the
    screen, over the cards still below it, and a card is picked and applied from there."""
    width, height = SIZES["phone"][0], 520  # a short screen: the demo's cards overflow it
    page = demo.new_page(browser, width, height, signed_in=True)
    page.goto(demo.url(f"/dashboard/forms/{demo.form_id}"))
    page.evaluate("document.querySelector('table.inbox').scrollIntoView()")
    last = page.locator("table.inbox tbody tr").last.bounding_box()
    bar = page.locator(".bulk").bounding_box()
    assert last is not None
    assert bar is not None
    assert last["y"] + last["height"] > height, "the cards fit: nothing to stay above"
    assert bar["y"] >= 0
    assert bar["y"] + bar["height"] <= height
    assert page.get_by_role("button", name="Apply").is_visible()
    page.locator("table.inbox tbody input[type=checkbox]").first.check()
    page.select_option("#action", "delete")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_load_state()
    assert page.get_by_role("heading", name="Delete 1 submission?").is_visible()
    page.context.close()


# -- the screenshots of docs/dashboard.md ----------------------------------------------


def _go(path: str) -> Callable[[Page, Demo], None]:
    def visit(page: Page, demo: Demo) -> None:
        page.goto(demo.url(path.format(form=demo.form_id, submission=demo.submission_id)))

    return visit


def _inbox(page: Page, demo: Demo) -> None:
    """The inbox; on a phone, scrolled to its cards, the bulk actions below them."""
    _go("/dashboard/forms/{form}")(page, demo)
    if page.viewport_size and page.viewport_size["width"] < SIZES["desktop"][0]:
        page.evaluate("document.querySelector('.tabs:not(.form-nav)').scrollIntoView()")


def _deliveries(page: Page, demo: Demo) -> None:
    """A submission's files and delivery timeline: its page scrolled down to them."""
    page.goto(demo.url(f"/dashboard/submissions/{demo.submission_id}"))
    page.evaluate("document.getElementById('triage').scrollIntoView()")


# (name, how to reach it, signed in, whether it is shown at both widths in both schemes)
DOCS_SHOTS: list[tuple[str, Callable[[Page, Demo], None], bool, bool]] = [
    ("sign-in", _go("/dashboard/sign-in"), False, True),
    ("forms", _go("/dashboard"), True, True),
    ("inbox", _inbox, True, True),
    ("submission", _go("/dashboard/submissions/{submission}"), True, True),
    ("submission-deliveries", _deliveries, True, False),
    ("form-settings", _go("/dashboard/forms/{form}/settings"), True, True),
    ("form-mail", _go("/dashboard/forms/{form}/settings/mail"), True, False),
    ("form-webhooks", _go("/dashboard/forms/{form}/settings/webhooks"), True, False),
    ("workspace-settings", _go("/dashboard/settings"), True, False),
    ("members", _go("/dashboard/settings/members"), True, True),
]


@pytest.mark.parametrize("size", list(SIZES))
def test_the_docs_screenshots(demo: Demo, browser: Browser, tmp_path: Path, size: str) -> None:
    """`make screenshots` keeps them in docs/images/dashboard as NAME-SIZE-SCHEME.png;
    otherwise they are made and checked all the same, so the docs' pictures cannot stop
    being takeable. Every screen in light on a desktop, the main ones in all four. Each
    screen is reached once at each width, and shot in each scheme as the system's
    setting switches it."""
    target = Path(os.environ.get("INTAKE_DOCS_SCREENSHOTS") or tmp_path)
    target.mkdir(parents=True, exist_ok=True)
    pages = {
        signed: _page(demo, browser, size, "light", signed_in=signed) for signed in (False, True)
    }
    for name, visit, signed_in, every_variant in DOCS_SHOTS:
        if not every_variant and size != "desktop":
            continue
        page = pages[signed_in]
        visit(page, demo)
        assert page.locator("main h1").count() == 1, name
        assert page.title() != "Not found · intake", name
        for scheme in SCHEMES if every_variant else ("light",):
            page.emulate_media(color_scheme=scheme)
            shot = target / f"{name}-{size}-{scheme}.png"
            page.screenshot(path=str(shot), type="png", full_page=False)
            assert_real_png(shot, SIZES[size])
            assert shot.stat().st_size < MAX_SHOT_BYTES, f"{shot}: {shot.stat().st_size} bytes"
    for page in pages.values():
        page.context.close()
