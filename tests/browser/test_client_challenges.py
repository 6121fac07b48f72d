"""intake.js in Chromium, on the SQLite service that has a stand-in for Turnstile's
siteverify: a challenge's token picked up as intake reads it, a challenge_failed asking
for the check again (and resetting the widget), a 503 retried under the same key after
its Retry-After, and a 413 naming the limit. The store plays no part here:
test_client_form.py walks both."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import Page, Route

from intake.domain.model import ChallengeProvider
from tests.browser.conftest import BROWSER_TIMEOUT_MS, Service, Site, snippet
from tests.support.fake_provider import PASS_SECRET, FakeProvider

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STATE = "form[data-intake-state={}]"
CHECK_AGAIN = "We could not verify that submission. Please complete the check again, then send."


def _open(page: Page, site: Site, service: Service, workspace_id: str, *options: str) -> str:
    form = service.create_form(
        workspace_id, "--name", "Client", "--allowed-origin", site.origin, *options
    )
    html = snippet("client-form.html", base=service.base, key=form["public_form_key"])
    page.goto(site.put(f"/{form['form_id']}.html", html))
    page.wait_for_selector("form[data-intake] .intake-status", state="attached")
    page.fill("input[name=email]", "ada@example.com")
    page.fill("textarea[name=message]", "Checked")
    form_id: str = form["form_id"]
    return form_id


def _send(page: Page, state: str) -> None:
    # The state is cleared first, so that the wait is for this try's answer.
    page.evaluate("document.querySelector('form').dataset.intakeState = ''")
    page.click("button[type=submit]")
    page.wait_for_selector(STATE.format(state), timeout=3 * BROWSER_TIMEOUT_MS)


def test_a_failed_challenge_asks_again_and_a_widgets_token_is_sent_as_intake_reads_it(
    page: Page, site: Site, service: Service, workspace_id: str, provider: FakeProvider
) -> None:
    form_id = _open(
        page, site, service, workspace_id,
        "--challenge", "turnstile", "--challenge-secret", PASS_SECRET,
    )  # fmt: skip
    # What Turnstile's api.js defines; its reset() gives the visitor a new check.
    page.evaluate("window.turnstile = {resets: 0, reset() { this.resets += 1; }}")

    _send(page, "error")

    assert page.inner_text(".intake-status") == CHECK_AGAIN
    assert page.get_attribute("form", "data-intake-code") == "challenge_failed"
    assert page.evaluate("window.turnstile.resets") == 1
    assert service.submissions(form_id) == []

    # A widget rendered outside the form leaves its token in the page all the same.
    page.evaluate(
        "() => { const token = document.createElement('input'); token.type = 'hidden';"
        " token.name = 'cf-turnstile-response'; token.value = 'token-from-the-widget';"
        " document.body.append(token); }"
    )
    _send(page, "ok")

    verified = [
        r.form
        for r in provider.requests
        if r.provider is ChallengeProvider.TURNSTILE and r.form.get("response")
    ]
    assert verified[-1]["response"] == "token-from-the-widget"
    assert len(service.submissions(form_id)) == 1


def test_a_503_is_retried_after_its_retry_after_under_the_same_key(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    form_id = _open(page, site, service, workspace_id)
    tries: list[tuple[float, str]] = []

    def busy_once(route: Route) -> None:
        request = route.request
        if request.method != "POST":
            route.continue_()
            return
        tries.append((time.monotonic(), request.headers["idempotency-key"]))
        if len(tries) > 1:
            route.continue_()
            return
        envelope = {
            "ok": False,
            "error": {
                "code": "service_unavailable",
                "message": "We could not accept that submission. Please try again.",
            },
            "request_id": "req_stand_in",
        }
        route.fulfill(
            status=503,
            headers={
                "Retry-After": "2",
                "Access-Control-Allow-Origin": site.origin,
                "Access-Control-Expose-Headers": "Retry-After",
            },
            content_type="application/json",
            body=json.dumps(envelope),
        )

    page.route(f"{service.base}/f/**", busy_once)

    _send(page, "ok")

    assert len(tries) == 2
    assert tries[0][1] == tries[1][1]
    # Retry-After: 2, not the first back-off step of one second (a lower bound only).
    assert tries[1][0] - tries[0][0] >= 1.9
    assert len(service.submissions(form_id)) == 1


def test_a_submission_too_large_names_the_limit(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    form_id = _open(page, site, service, workspace_id)
    # Over the 20 KB a field may hold: intake answers 413 payload_too_large.
    page.fill("textarea[name=message]", "x" * (21 * 1024))

    _send(page, "error")

    assert page.get_attribute("form", "data-intake-code") == "payload_too_large"
    assert (
        page.inner_text(".intake-status")
        == "That submission is too large: each answer may be up to 20 KB."
    )
    assert service.submissions(form_id) == []
