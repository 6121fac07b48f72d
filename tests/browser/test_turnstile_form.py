"""docs/snippets/turnstile-form.html in Chromium, against a form that requires Turnstile
and a local stand-in for Cloudflare's siteverify (tests/support/fake_provider.py)."""

from __future__ import annotations

import json
import secrets

import pytest
from playwright.sync_api import Page, Response, Route

from intake.domain.model import ChallengeProvider
from tests.browser.conftest import Service, Site, click_send, snippet
from tests.support.fake_provider import PASS_SECRET, FakeProvider

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDGET_SCRIPT = "https://challenges.cloudflare.com/**"

# Turnstile's api.js cannot load here (the tests run offline, and a real widget would
# need a real site key and a person). This stand-in does what the widget does once the
# visitor passes: it puts a hidden cf-turnstile-response field holding the token inside
# the widget's element, so the form posts it along with the visitor's fields.
_WIDGET_STAND_IN = """
(function () {
  function pass() {
    for (const widget of document.querySelectorAll(".cf-turnstile")) {
      const field = document.createElement("input");
      field.type = "hidden";
      field.name = "cf-turnstile-response";
      field.value = %s;
      widget.append(field);
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", pass);
  } else {
    pass();
  }
})();
"""


def _open(page: Page, site: Site, service: Service, workspace_id: str) -> str:
    form = service.create_form(
        workspace_id,
        "--name", "Turnstile",
        "--challenge", "turnstile",
        "--challenge-secret", PASS_SECRET,
    )  # fmt: skip
    html = snippet("turnstile-form.html", base=service.base, key=form["public_form_key"])
    page.goto(site.put(f"/{form['form_id']}.html", html))
    form_id: str = form["form_id"]
    return form_id


def _submit(page: Page) -> Response:
    page.fill("input[name=name]", "Ada")
    page.fill("input[name=email]", "ada@example.com")
    page.fill("textarea[name=message]", "Verified, I hope")
    return click_send(page)


def test_the_widgets_token_is_verified_and_the_submission_stored(
    page: Page, site: Site, service: Service, workspace_id: str, provider: FakeProvider
) -> None:
    token = "token-" + secrets.token_hex(8)

    def widget(route: Route) -> None:
        route.fulfill(
            status=200,
            content_type="text/javascript",
            body=_WIDGET_STAND_IN % json.dumps(token),
        )

    page.route(WIDGET_SCRIPT, widget)
    form_id = _open(page, site, service, workspace_id)
    page.wait_for_selector("input[name=cf-turnstile-response]", state="attached")

    response = _submit(page)

    assert response.status == 200
    assert page.inner_text("h1") == "Thank you"
    verified = [r for r in provider.requests if r.form.get("response") == token]
    assert [r.provider for r in verified] == [ChallengeProvider.TURNSTILE]
    stored = service.submissions(form_id)
    assert [s["status"] for s in stored] == ["accepted"]
    # The token is a control field: verified, never stored as data.
    assert stored[0]["data"] == {
        "name": "Ada",
        "email": "ada@example.com",
        "message": "Verified, I hope",
    }


def test_without_the_widget_the_submission_is_refused(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    # As when the widget's script is blocked: no token is ever added to the form.
    page.route(WIDGET_SCRIPT, lambda route: route.abort())
    form_id = _open(page, site, service, workspace_id)

    response = _submit(page)

    assert response.status == 403
    assert page.inner_text("h1") == "Submission failed"
    assert "We could not verify that submission. Please try again." in page.inner_text("body")
    assert service.submissions(form_id) == []
