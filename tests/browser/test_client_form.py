"""docs/snippets/client-form.html in Chromium: the form taken over by intake.js, loaded
from a live `intake serve` on another origin under the page's strict CSP, on SQLite and
on PostgreSQL with Redis. Field errors beside their fields (and axe-core clean), one
submission per double click and per retry after a lost answer, a 429's wait in words,
upload progress, files refused before sending, and the same page without JavaScript.

With INTAKE_DOCS_SCREENSHOTS set to a folder, the states docs/browsers.md shows are
written there (`make screenshots`)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Route

from intake.entrypoints.http.dashboard.snippet import client_tags
from tests.browser.axe import assert_accessible
from tests.browser.conftest import (
    BROWSER_TIMEOUT_MS,
    VIEWPORT_HEIGHT,
    VIEWPORT_WIDTH,
    Service,
    Site,
    assert_real_png,
    snippet,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SUCCESS = "Thank you! We will be in touch."
STATE = "form[data-intake-state={}]"
BURST = 5  # the public burst limit per address and form (spec part 8)
UPLOAD_BYTES_PER_S = 256 * 1024  # the throttled upload, so progress can be seen


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def service(request: pytest.FixtureRequest, service: Service) -> Service:
    """The walks on the embedded store and on PostgreSQL with Redis."""
    if request.param == "postgres":
        running: Service = request.getfixturevalue("postgres_service")
        return running
    return service


@pytest.fixture(scope="module")
def client_workspace(service: Service) -> str:
    created = service.intake("workspace", "create", "--name", "Client", "--plan", "starter")
    workspace: str = created["workspace_id"]
    return workspace


@pytest.fixture(autouse=True)
def violations(page: Page) -> Iterator[list[str]]:
    """Every test's page keeps to its CSP: the console says what the page refused."""
    said: list[str] = []

    def listen(message: ConsoleMessage) -> None:
        # Code the test itself evaluates (axe-core adds a style) has no URL: not the page's.
        if (
            message.type == "error"
            and "Content Security Policy" in message.text
            and message.location.get("url")
        ):
            said.append(message.text)

    page.on("console", listen)
    yield said
    assert said == [], said


def _screenshot(page: Page, tmp_path: Path, name: str) -> None:
    """The page as it is, checked to be a real picture; kept for the docs when asked."""
    folder = os.environ.get("INTAKE_DOCS_SCREENSHOTS")
    path = Path(folder) / f"{name}.png" if folder else tmp_path / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    # caret="initial": hiding the caret would add an inline style the page's CSP refuses.
    page.screenshot(path=str(path), caret="initial")
    assert_real_png(path, (VIEWPORT_WIDTH, VIEWPORT_HEIGHT))


def _open(
    page: Page,
    site: Site,
    service: Service,
    workspace: str,
    name: str,
    *options: str,
    attributes: str = "",
) -> dict[str, Any]:
    """A form allowing the site, and the snippet's page for it, loaded and enhanced;
    `attributes` are added to the form element, as the dashboard's snippet adds them."""
    form = service.create_form(workspace, "--name", name, "--allowed-origin", site.origin, *options)
    html = snippet("client-form.html", base=service.base, key=form["public_form_key"])
    html = html.replace("<form data-intake ", f"<form data-intake {attributes}", 1)
    page.goto(site.put(f"/{form['form_id']}.html", html))
    page.wait_for_selector("form[data-intake] .intake-status[role=status]", state="attached")
    return form


def _fill(page: Page, message: str = "Hello from intake.js") -> None:
    page.fill("input[name=name]", "Ada")
    page.fill("input[name=email]", "ada@example.com")
    page.check("input[name=topics][value=support]")
    page.fill("textarea[name=message]", message)


def _status(page: Page) -> str:
    return page.inner_text(".intake-status")


def _posts(page: Page, service: Service) -> list[dict[str, str]]:
    """The headers of every POST the page sends to the service, as they go."""
    sent: list[dict[str, str]] = []
    page.on(
        "request",
        lambda request: (
            sent.append(request.headers)
            if request.method == "POST" and request.url.startswith(service.base)
            else None
        ),
    )
    return sent


def test_field_errors_show_beside_their_fields_and_axe_finds_nothing(
    page: Page,
    site: Site,
    service: Service,
    client_workspace: str,
    tmp_path: Path,
) -> None:
    form = _open(page, site, service, client_workspace, "Strict", "--rule", "message:max_length=10")
    _screenshot(page, tmp_path, "client-idle")
    _fill(page, "Far longer than ten")

    page.click("button[type=submit]")
    page.wait_for_selector(STATE.format("error"))

    message = page.locator("textarea[name=message]")
    described = message.get_attribute("aria-describedby") or ""
    note = page.locator(f"#{described}")
    assert message.get_attribute("aria-invalid") == "true"
    assert note.get_attribute("class") == "intake-field-error"
    assert re.search(r"\b10\b", note.inner_text()), note.inner_text()
    # The note follows the field's label, and focus went to the field.
    assert page.evaluate("document.activeElement.name") == "message"
    assert (
        page.evaluate(
            "document.querySelector('textarea[name=message]').closest('label')"
            ".nextElementSibling.id"
        )
        == described
    )
    assert _status(page) == "Please check the highlighted fields."
    assert page.get_attribute("form", "data-intake-code") == "validation_failed"
    assert page.locator("input[name=name]").get_attribute("aria-invalid") is None
    assert_accessible(page)
    _screenshot(page, tmp_path, "client-field-errors")
    assert service.submissions(form["form_id"]) == []

    # Put right, the same render sends again and the marks go.
    page.fill("textarea[name=message]", "Short")
    page.click("button[type=submit]")
    page.wait_for_selector(STATE.format("ok"))
    assert page.locator(".intake-field-error").count() == 0
    assert message.get_attribute("aria-invalid") is None
    assert _status(page) == SUCCESS
    _screenshot(page, tmp_path, "client-success")
    assert [s["data"]["message"] for s in service.submissions(form["form_id"])] == ["Short"]


def test_a_double_click_makes_one_submission(
    page: Page, site: Site, service: Service, client_workspace: str
) -> None:
    form = _open(page, site, service, client_workspace, "Double click")
    sent = _posts(page, service)
    _fill(page)

    page.dblclick("button[type=submit]")
    page.wait_for_selector(STATE.format("ok"))

    assert len(sent) == 1, sent
    (stored,) = service.submissions(form["form_id"])
    assert stored["data"] == {
        "name": "Ada",
        "email": "ada@example.com",
        "topics": "support",
        "message": "Hello from intake.js",
    }
    # After a success the form is new: the next submission gets a key of its own.
    _fill(page, "A second one")
    page.evaluate("document.querySelector('form').dataset.intakeState = ''")
    page.click("button[type=submit]")
    page.wait_for_selector(STATE.format("ok"))
    assert len(sent) == 2
    assert sent[0]["idempotency-key"] != sent[1]["idempotency-key"]
    assert len(service.submissions(form["form_id"])) == 2


def test_an_answer_lost_after_the_commit_is_retried_into_the_same_submission(
    page: Page, site: Site, service: Service, client_workspace: str
) -> None:
    form = _open(page, site, service, client_workspace, "Lost answer")
    keys: list[str] = []

    def drop_the_first_answer(route: Route) -> None:
        request = route.request
        if request.method != "POST":
            route.continue_()
            return
        keys.append(request.headers["idempotency-key"])
        if len(keys) == 1:
            # The request reaches intake and is committed; its answer never arrives.
            committed = route.fetch()
            assert committed.status == 201, committed.text()
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route(f"{service.base}/f/**", drop_the_first_answer)
    _fill(page)

    page.click("button[type=submit]")
    page.wait_for_selector(STATE.format("ok"), timeout=3 * BROWSER_TIMEOUT_MS)

    assert len(keys) == 2, keys
    assert keys[0] == keys[1]
    assert _status(page) == SUCCESS
    assert len(service.submissions(form["form_id"])) == 1


def test_a_rate_limit_says_when_to_try_again(
    page: Page,
    site: Site,
    service: Service,
    client_workspace: str,
    tmp_path: Path,
) -> None:
    form = _open(page, site, service, client_workspace, "Busy")
    # This address's burst, spent by another client first.
    for n in range(BURST):
        answer = httpx.post(
            f"{service.base}/f/{form['public_form_key']}",
            json={"email": f"n{n}@example.com"},
            headers={"Origin": site.origin},
        )
        assert answer.status_code == 201, answer.text
    _fill(page)

    page.click("button[type=submit]")
    page.wait_for_selector(STATE.format("error"))

    shown = _status(page)
    assert re.fullmatch(r"Too many submissions\. Please try again in \d+ seconds?\.", shown), shown
    assert "429" not in shown
    assert page.get_attribute("form", "data-intake-code") == "rate_limited"
    assert page.is_enabled("button[type=submit]")
    _screenshot(page, tmp_path, "client-rate-limited")
    assert len(service.submissions(form["form_id"])) == BURST


def _text_file(path: Path, size: int) -> Path:
    path.write_bytes(b"A line of a plain text file, repeated.\n" * (size // 39))
    return path


def test_an_upload_shows_its_progress_and_a_file_over_the_limit_is_refused_first(
    page: Page,
    site: Site,
    service: Service,
    client_workspace: str,
    tmp_path: Path,
) -> None:
    form = _open(
        page,
        site,
        service,
        client_workspace,
        "Files",
        "--max-file-size",
        "2MiB",
        attributes=f'data-intake-max-file="{2 * 1024 * 1024}" ',
    )
    sent = _posts(page, service)
    _fill(page)
    page.set_input_files("input[name=file]", _text_file(tmp_path / "huge.txt", 3 * 1024 * 1024))

    page.click("button[type=submit]")
    page.wait_for_selector(STATE.format("error"))

    assert _status(page) == "huge.txt is too large: each file may be up to 2 MB."
    assert sent == []  # refused in the browser: nothing went out

    chosen = _text_file(tmp_path / "notes.txt", 1024 * 1024)
    page.set_input_files("input[name=file]", chosen)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": 0,
            "downloadThroughput": -1,
            "uploadThroughput": UPLOAD_BYTES_PER_S,
        },
    )
    page.click("button[type=submit]")
    page.wait_for_selector("progress.intake-progress:not([hidden])")
    page.wait_for_function(
        "() => { const p = document.querySelector('progress.intake-progress');"
        " return p.value > 0 && p.value < 1; }"
    )
    assert page.is_disabled("button[type=submit]")
    assert page.get_attribute("form", "data-intake-state") == "sending"
    _screenshot(page, tmp_path, "client-sending")
    page.wait_for_selector(STATE.format("ok"), timeout=6 * BROWSER_TIMEOUT_MS)

    assert page.is_hidden("progress.intake-progress")
    assert sent[0]["content-type"].startswith("multipart/form-data; boundary=")
    (stored,) = service.submissions(form["form_id"])
    (file,) = stored["files"]
    assert (file["name"], file["size"]) == ("notes.txt", chosen.stat().st_size)


def test_a_success_follows_next_on_the_sites_own_origin(
    page: Page, site: Site, service: Service, client_workspace: str
) -> None:
    form = _open(page, site, service, client_workspace, "Next")
    thanks = site.put(f"/{form['form_id']}-thanks.html", "<!doctype html><title>Thanks</title>")
    page.evaluate(
        "() => { const next = document.createElement('input'); next.type = 'hidden';"
        " next.name = '_next'; next.value = location.pathname.replace('.html', '-thanks.html');"
        " document.querySelector('form').append(next); }"
    )
    _fill(page)

    with page.expect_navigation(url=thanks):
        page.click("button[type=submit]")

    assert len(service.submissions(form["form_id"])) == 1


def test_the_page_without_javascript_posts_the_plain_form(
    browser: Browser, site: Site, service: Service, client_workspace: str
) -> None:
    context = browser.new_context(java_script_enabled=False)
    context.set_default_timeout(BROWSER_TIMEOUT_MS)
    try:
        page = context.new_page()
        form = service.create_form(
            client_workspace, "--name", "No script", "--allowed-origin", site.origin
        )
        key = form["public_form_key"]
        html = snippet("client-form.html", base=service.base, key=key)
        page.goto(site.put(f"/{form['form_id']}.html", html))
        _fill(page)
        with page.expect_navigation(url=f"{service.base}/f/{key}/thanks"):
            page.click("button[type=submit]")
        assert page.inner_text("h1") == "Thank you"
    finally:
        context.close()
    (stored,) = service.submissions(form["form_id"])
    assert stored["data"]["message"] == "Hello from intake.js"


def test_the_dashboards_pinned_tags_load_under_their_integrity(
    page: Page, site: Site, service: Service, client_workspace: str
) -> None:
    form = service.create_form(
        client_workspace, "--name", "Pinned", "--allowed-origin", site.origin
    )
    html = snippet("client-form.html", base=service.base, key=form["public_form_key"])
    stable = [line for line in html.splitlines() if f'"{service.base}/intake.' in line]
    assert len(stable) == 2, stable
    for line, pinned in zip(stable, client_tags(service.base), strict=True):
        html = html.replace(line, pinned)
    page.goto(site.put(f"/{form['form_id']}.html", html))
    page.wait_for_selector("form[data-intake] .intake-status", state="attached")
    _fill(page)

    page.click("button[type=submit]")
    page.wait_for_selector(STATE.format("ok"))

    assert len(service.submissions(form["form_id"])) == 1
