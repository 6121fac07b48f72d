"""Every dashboard screen in Chromium, checked by axe-core (WCAG 2.1 A and AA and axe's
best practices: no violation of any impact) on a desktop and at 390 px wide, in the light
and the dark scheme, where nothing may scroll sideways; and the keyboard reaches the main
actions with a visible focus. How the pages look: test_dashboard_look.py."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, JSHandle, Page
from playwright.sync_api import Error as PlaywrightError

from tests.browser.axe import assert_accessible, assert_no_violations, axe_violations
from tests.browser.dashboard_demo import OWNER, PASSWORD, Demo, running_demo

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DESKTOP = (1280, 800)
PHONE = (390, 844)
SCHEMES: tuple[Literal["light", "dark"], ...] = ("light", "dark")
_unique = itertools.count()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[Demo]:
    with running_demo(tmp_path_factory.mktemp("dashboard-demo"), browser) as running:
        yield running


# -- the screens: how to reach each one from a fresh page ------------------------------


@dataclass(frozen=True)
class Screen:
    name: str
    signed_in: bool
    visit: Callable[[Page, Demo], None]


def _go(path: str) -> Callable[[Page, Demo], None]:
    def visit(page: Page, demo: Demo) -> None:
        page.goto(demo.url(path.format(form=demo.form_id, submission=demo.submission_id)))

    return visit


def _sign_in_link(page: Page, demo: Demo) -> None:
    page.goto(demo.url(demo.sign_in_link(f"new-{next(_unique)}@acme.example")))


def _sign_in_error(page: Page, demo: Demo) -> None:
    page.goto(demo.url("/dashboard/sign-in"))
    page.fill("#email", OWNER)
    page.fill("#password", "not the password")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()


def _expired_form(page: Page, demo: Demo) -> None:
    """The sign-in form posted after its cookie is gone: refused (403)."""
    page.goto(demo.url("/dashboard/sign-in"))
    page.context.clear_cookies()
    page.fill("#email", OWNER)
    page.fill("#password", PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()
    assert page.get_by_role("heading", name="This form could not be accepted").is_visible()


def _bulk(page: Page, demo: Demo, *, pick: bool) -> None:
    page.goto(demo.url(f"/dashboard/forms/{demo.form_id}"))
    if pick:
        page.locator("table.inbox input[type=checkbox]").first.check()
    page.select_option("#action", "delete")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_load_state()


def _new_key(page: Page, demo: Demo) -> None:
    page.goto(demo.url("/dashboard/settings"))
    page.get_by_role("button", name="Create key").click()
    page.wait_for_load_state()
    assert page.locator(".secret").is_visible()


def _revoke_confirmation(page: Page, demo: Demo) -> None:
    _new_key(page, demo)
    page.get_by_role("button", name="Revoke").first.click()
    page.wait_for_load_state()
    assert page.get_by_role("alertdialog").is_visible()


def _invite(page: Page, demo: Demo, email: str) -> None:
    page.goto(demo.url("/dashboard/settings/members"))
    page.fill("input[type=email]", email)
    page.get_by_role("button", name="Invite").click()
    page.wait_for_load_state()
    assert page.locator(".notice").is_visible()


def _invitation(page: Page, demo: Demo) -> None:
    _invite(page, demo, f"guest-{next(_unique)}@acme.example")


def _pending_invitations(page: Page, demo: Demo) -> None:
    _invitation(page, demo)
    page.goto(demo.url("/dashboard/settings/members"))
    assert page.get_by_role("button", name="Resend").first.is_visible()


def _invitation_offered(page: Page, demo: Demo) -> None:
    """A user of another workspace, signed in, with the owner's invitation on Forms."""
    guest = f"guest-{next(_unique)}@acme.example"
    owners = page.context.browser
    assert owners is not None
    context = owners.new_context(storage_state=demo.owner)
    try:
        _invite(context.new_page(), demo, guest)
    finally:
        context.close()
    studio = demo.service.intake("workspace", "create", "--name", "Guest studio")
    made = demo.service.intake(
        "user", "create", "--email", guest, "--workspace", studio["workspace_id"]
    )
    page.goto(demo.url(urlsplit(made["sign_in_link"]).path))
    page.fill("#password", PASSWORD)
    page.fill("#confirm", PASSWORD)
    page.get_by_role("button", name="Set password and sign in").click()
    page.wait_for_load_state()
    assert page.get_by_role("button", name="Accept").first.is_visible()


def _webhook_endpoint(page: Page, demo: Demo) -> None:
    """An endpoint's page, with its delivery log, reached from the form's webhooks."""
    page.goto(demo.url(f"/dashboard/forms/{demo.form_id}/settings/webhooks"))
    page.locator("main a[href*='/settings/webhooks/']").first.click()
    page.wait_for_load_state()


def _erasure_dry_run(page: Page, demo: Demo) -> None:
    """What erasing a visitor's data would erase, asked before anything is."""
    page.goto(demo.url("/dashboard/settings"))
    page.fill("#erasure-email", "maria.lopez@example.org")
    page.get_by_role("button", name="Find their submissions").click()
    page.wait_for_load_state()
    assert page.get_by_role("table").is_visible()


SCREENS = [
    Screen("sign-in", False, _go("/dashboard/sign-in")),
    Screen("sign-in refused", False, _sign_in_error),
    Screen("sign-in link", False, _sign_in_link),
    Screen("link refused", False, _go("/dashboard/sign-in/not-a-link-that-exists")),
    Screen("form refused (403)", False, _expired_form),
    Screen("invitation refused (410)", False, _go("/dashboard/invitations/not-a-real-one")),
    # Last of the signed-out ones: it ends signed in, as the invitee.
    Screen("forms, an invitation offered", False, _invitation_offered),
    Screen("forms", True, _go("/dashboard")),
    Screen("inbox", True, _go("/dashboard/forms/{form}")),
    Screen("inbox, spam", True, _go("/dashboard/forms/{form}?status=spam")),
    Screen("inbox, unverified", True, _go("/dashboard/forms/{form}?status=unverified")),
    Screen("inbox, no match", True, _go("/dashboard/forms/{form}?q=no+such+words")),
    Screen("inbox, bad filter", True, _go("/dashboard/forms/{form}?since=yesterday")),
    Screen("inbox, nothing selected", True, lambda page, demo: _bulk(page, demo, pick=False)),
    Screen("bulk delete confirmation", True, lambda page, demo: _bulk(page, demo, pick=True)),
    Screen("submission", True, _go("/dashboard/submissions/{submission}")),
    Screen("delete confirmation", True, _go("/dashboard/submissions/{submission}/delete")),
    Screen("workspace settings", True, _go("/dashboard/settings")),
    Screen("new API key", True, _new_key),
    Screen("revoke confirmation", True, _revoke_confirmation),
    Screen("members", True, _go("/dashboard/settings/members")),
    Screen("invitation saved", True, _invitation),
    Screen("members, pending invitations", True, _pending_invitations),
    Screen("form settings", True, _go("/dashboard/forms/{form}/settings")),
    Screen("rotate key confirmation", True, _go("/dashboard/forms/{form}/settings/rotate-key")),
    Screen("form mail", True, _go("/dashboard/forms/{form}/settings/mail")),
    Screen("form webhooks", True, _go("/dashboard/forms/{form}/settings/webhooks")),
    Screen("webhook endpoint", True, _webhook_endpoint),
    Screen("form messages", True, _go("/dashboard/forms/{form}/settings/messages")),
    Screen("form chat", True, _go("/dashboard/forms/{form}/settings/chat")),
    Screen("copy or delete the form", True, _go("/dashboard/forms/{form}/settings/delete")),
    Screen("erasure, what would go", True, _erasure_dry_run),
    Screen("password", True, _go("/dashboard/password")),
    Screen("not found (404)", True, _go("/dashboard/forms/no-such-form")),
]


# -- axe and the page's width ----------------------------------------------------------


# Tables wider than the screen, or than their own box (clipped or scrolled inside it).
_WIDE_TABLES = """(width) => [...document.querySelectorAll("table")]
  .filter((t) => t.getBoundingClientRect().right > width || t.scrollWidth > t.clientWidth + 1
    || [...t.querySelectorAll("td, th")].some((c) => c.getBoundingClientRect().right > width))
  .map((t) => t.outerHTML.slice(0, 80))"""


def _overflow(page: Page) -> str | None:
    """What sticks out sideways at the viewport's width, if anything: the page, or a
    table (which could be clipped by its card without widening the page)."""
    width = page.viewport_size["width"] if page.viewport_size else 0
    tables = page.evaluate(_WIDE_TABLES, width)
    if tables:
        return f"tables wider than {width} px: {tables}"
    scroll = page.evaluate("document.documentElement.scrollWidth")
    if scroll <= width:
        return None
    wide = page.evaluate(
        """(width) => [...document.querySelectorAll("body *")]
          .filter((e) => e.getBoundingClientRect().right > width && !e.closest("table"))
          .slice(0, 5).map((e) => e.outerHTML.slice(0, 80))""",
        width,
    )
    return f"scrollWidth {scroll} > {width}: {wide}"


def test_axe_finds_a_control_without_a_label(demo: Demo, browser: Browser) -> None:
    """The check is not vacuous: a control stripped of its label is reported; and axe
    runs under the page's own Content-Security-Policy, which no test relaxes."""
    page = demo.new_page(browser, *DESKTOP, signed_in=False)
    response = page.goto(demo.url("/dashboard/sign-in"))
    assert response is not None
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.evaluate("document.querySelector('label[for=email]').remove()")
    found = {violation["id"] for violation in axe_violations(page)}
    assert "label" in found
    with pytest.raises(AssertionError, match="label"):
        assert_accessible(page)
    page.context.close()


@pytest.mark.parametrize("signed_in", [False, True], ids=["signed-out", "signed-in"])
@pytest.mark.parametrize(("width", "height"), [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_screen_passes_axe_and_fits_the_width(
    demo: Demo, browser: Browser, width: int, height: int, signed_in: bool
) -> None:
    """axe finds no violation of any impact, colour contrast included, in either scheme.
    Each screen is reached once at each width; the scheme is a media query, switched on
    the page reached, as the system's setting switches it."""
    failures = []
    page = demo.new_page(browser, width, height, signed_in=signed_in)
    for screen in (s for s in SCREENS if s.signed_in == signed_in):
        try:
            screen.visit(page, demo)
        except (AssertionError, PlaywrightError) as failure:
            failures.append(f"{screen.name}: {failure}")
            continue
        for scheme in SCHEMES:
            page.emulate_media(color_scheme=scheme)
            try:
                assert_no_violations(page)
            except (AssertionError, PlaywrightError) as failure:
                failures.append(f"{screen.name}, {scheme}: {failure}")
                continue
            too_wide = _overflow(page)
            if too_wide:
                failures.append(f"{screen.name} at {width} px, {scheme}: {too_wide}")
    page.context.close()
    assert not failures, "\n\n".join(failures)


# -- the keyboard ------------------------------------------------------------------------

_OUTLINE = """(e) => {
  const style = getComputedStyle(e);
  return [style.outlineStyle, style.outlineWidth, style.boxShadow].join(" ");
}"""
_NAME = """(e) => (e.labels && e.labels[0] ? e.labels[0].innerText
                                      : e.innerText || e.value || "").trim()"""
MAX_TABS = 80


def _tab_through(page: Page, wanted: set[str]) -> set[str]:
    """Tabs from the top of the page until every control named in `wanted` had the focus;
    each control focused on the way must look different once it loses the focus. Returns
    the names never reached."""
    page.locator("body").focus()
    missing = set(wanted)
    seen: list[tuple[str, str, JSHandle]] = []
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        handle = page.evaluate_handle("document.activeElement")
        if seen and page.evaluate("([a, b]) => a === b", [handle, seen[-1][2]]):
            continue  # a date input's next part: the same control
        name = page.evaluate(_NAME, handle)
        seen.append((name, page.evaluate(_OUTLINE, handle), handle))
        missing.discard(name)
        if not missing:
            break
    page.evaluate("document.activeElement.blur()")
    for name, focused, handle in seen:
        unfocused = page.evaluate(_OUTLINE, handle)
        assert focused != unfocused, f"{name!r} shows no focus on {page.url}: {focused}"
    return missing


@pytest.mark.parametrize(
    ("path", "wanted"),
    [
        ("/dashboard/sign-in", {"Email address", "Password", "Sign in"}),
        ("/dashboard", {"Forms", "Settings", "Sign out", "Contact"}),
        ("/dashboard/forms/{form}", {"Search", "Filter", "csv", "With the selected", "Apply"}),
        ("/dashboard/submissions/{submission}", {"Reply by email", "Mark as spam", "Delete…"}),
        ("/dashboard/settings", {"submit", "Create key"}),
        ("/dashboard/settings/members", {"Invite by email address", "Role", "Invite"}),
    ],
    ids=["sign-in", "forms", "inbox", "submission", "settings", "members"],
)
def test_the_keyboard_reaches_the_main_actions_with_a_visible_focus(
    demo: Demo, browser: Browser, path: str, wanted: set[str]
) -> None:
    page = demo.new_page(browser, *DESKTOP, signed_in=path != "/dashboard/sign-in")
    page.goto(demo.url(path.format(form=demo.form_id, submission=demo.submission_id)))
    assert _tab_through(page, wanted) == set()
    page.context.close()
