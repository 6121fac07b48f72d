"""docs/snippets/fetch-form.html in Chromium: JSON sent with fetch() from another origin,
through the CORS preflight, and the page showing intake's answer."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page

from intake.service.messages import CONFIRMATION
from tests.browser.conftest import Service, Site, snippet

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SUBMISSION_ID = re.compile(r"^sub_[A-Za-z0-9_-]{16,}$")


def _fetch_form(
    service: Service, site: Site, workspace_id: str, name: str, *options: str
) -> tuple[dict[str, Any], str]:
    """A form allowing the site's origin, and the snippet's page for it on the site."""
    form = service.create_form(
        workspace_id, "--name", name, "--allowed-origin", site.origin, *options
    )
    html = snippet("fetch-form.html", base=service.base, key=form["public_form_key"])
    return form, site.put(f"/{form['form_id']}.html", html)


def _send(page: Page, *, message: str = "Hello over fetch") -> dict[str, str]:
    """Fills the page's form, clicks Send, and waits for the page to show the answer."""
    page.fill("input[name=name]", "Ada")
    page.fill("input[name=email]", "ada@example.com")
    page.check("input[name=topics][value=sales]")
    page.check("input[name=topics][value=press]")
    page.fill("textarea[name=message]", message)
    page.click("button[type=submit]")
    page.wait_for_selector("#status[data-state=ok], #status[data-state=error]")
    status = page.locator("#status")
    return {
        "state": status.get_attribute("data-state") or "",
        "code": status.get_attribute("data-code") or "",
        "text": status.inner_text(),
    }


def _preflights(service: Service) -> list[int]:
    """The statuses of the preflights the service has answered so far."""
    return [
        line["status"]
        for line in service.log_lines()
        if line.get("logger") == "intake.access"
        and line.get("method") == "OPTIONS"
        and str(line.get("route", "")).startswith("/f/")
    ]


def test_a_page_on_an_allowed_origin_posts_json_and_shows_the_submission_id(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    form, url = _fetch_form(service, site, workspace_id, "Fetch")
    page.goto(url)
    earlier = _preflights(service)

    shown = _send(page)

    submission_id = page.inner_text("#submission-id")
    assert shown["state"] == "ok", shown
    assert shown["text"] == f"{CONFIRMATION} Reference: {submission_id}"
    assert SUBMISSION_ID.match(submission_id), submission_id
    # JSON is not a simple request: the browser asked first, and was answered yes.
    assert _preflights(service) == [*earlier, 204], service.tail()
    stored = service.submissions(form["form_id"])
    assert [s["submission_id"] for s in stored] == [submission_id]
    assert stored[0]["data"] == {
        "name": "Ada",
        "email": "ada@example.com",
        "topics": ["sales", "press"],
        "message": "Hello over fetch",
    }
    # The page clears the form after a success.
    assert page.input_value("textarea[name=message]") == ""


def test_a_page_on_another_origin_reads_origin_not_allowed(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    form, url = _fetch_form(service, site, workspace_id, "Fetch elsewhere")
    # The same page, but under a host name the form does not allow.
    foreign = url.replace(site.origin, site.foreign_origin, 1)
    assert foreign != url
    page.goto(foreign)

    shown = _send(page)

    assert shown == {
        "state": "error",
        "code": "origin_not_allowed",
        "text": "This form does not accept submissions from that address.",
    }
    assert (page.get_attribute("#status", "title") or "").startswith("Request req_")
    assert service.submissions(form["form_id"]) == []


def test_a_page_shows_each_field_that_failed_validation(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    form, url = _fetch_form(
        service, site, workspace_id, "Fetch strict", "--rule", "message:max_length=10"
    )
    page.goto(url)

    shown = _send(page, message="Far longer than ten")

    assert shown == {
        "state": "error",
        "code": "validation_failed",
        "text": "Please check the highlighted fields.",
    }
    problems = page.locator("#field-errors li")
    assert problems.count() == 1
    assert problems.first.get_attribute("data-field") == "message"
    assert problems.first.inner_text().startswith("message: ")
    # Nothing was lost: the visitor can correct the message and send again.
    assert page.input_value("textarea[name=message]") == "Far longer than ten"
    assert service.submissions(form["form_id"]) == []


def test_a_filled_honeypot_gets_the_same_answer_shape_and_stores_nothing(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    form, url = _fetch_form(service, site, workspace_id, "Fetch honeypot")
    page.goto(url)
    real = _send(page, message="A person")
    real_id = page.inner_text("#submission-id")

    page.goto(url)
    # What a bot does: fill every field, the hidden one too.
    page.eval_on_selector("input[name=_gotcha]", "field => { field.value = 'bot'; }")
    caught = _send(page, message="A bot")
    caught_id = page.inner_text("#submission-id")

    assert caught["state"] == real["state"] == "ok"
    assert caught["text"].replace(caught_id, "") == real["text"].replace(real_id, "")
    assert SUBMISSION_ID.match(caught_id), caught_id
    assert len(caught_id) == len(real_id)
    assert caught_id != real_id
    stored = service.submissions(form["form_id"])
    assert [s["submission_id"] for s in stored] == [real_id]
