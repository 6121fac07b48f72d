"""docs/snippets/plain-form.html in Chromium: a form posted by clicking its button, where
the browser lands afterwards, and what was stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import (
    Service,
    Site,
    assert_real_png,
    click_send,
    posted_request,
    snippet,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

THANKS_TITLE = "Thank you"
SUBJECT = "New message from the contact form"  # the snippet's hidden _subject
# Non-ASCII in three scripts and an emoji outside the BMP, plus what HTML and the form
# encodings treat specially.
NAME = "Zoë — 東京 — 🎉"
MESSAGE = 'Ünïcödé "quoted" & <b>not bold</b> = 100% + more; a=b'


def _open(page: Page, site: Site, service: Service, key: str, path: str) -> None:
    page.goto(site.put(path, snippet("plain-form.html", base=service.base, key=key)))


def _fill(page: Page, *, name: str, email: str, message: str, topics: list[str]) -> None:
    page.fill("input[name=name]", name)
    page.fill("input[name=email]", email)
    for topic in topics:
        page.check(f"input[name=topics][value={topic}]")
    page.fill("textarea[name=message]", message)


def test_a_clicked_form_lands_on_the_thank_you_page_and_is_stored(
    page: Page, site: Site, service: Service, workspace_id: str, tmp_path: Path
) -> None:
    form = service.create_form(workspace_id, "--name", "Plain")
    key = form["public_form_key"]
    _open(page, site, service, key, "/plain.html")
    _fill(page, name="Ada", email="ada@example.com", message="Hello", topics=["support"])

    response = click_send(page)

    posted = posted_request(response)
    assert posted.url == f"{service.base}/f/{key}"
    assert page.url == f"{service.base}/f/{key}/thanks"
    assert response.status == 200
    assert page.inner_text("h1") == THANKS_TITLE
    page.screenshot(path=tmp_path / "thanks.png")
    assert_real_png(tmp_path / "thanks.png")
    stored = service.submissions(form["form_id"])
    assert [(s["status"], s["subject"]) for s in stored] == [("accepted", SUBJECT)]
    assert stored[0]["data"] == {
        "name": "Ada",
        "email": "ada@example.com",
        "topics": "support",
        "message": "Hello",
    }


def test_a_form_with_a_redirect_url_lands_on_that_page_of_the_site(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    destination = site.put("/sent.html", "<!doctype html><title>Sent</title><h1>Got it</h1>")
    form = service.create_form(workspace_id, "--name", "Redirecting", "--redirect-url", destination)
    _open(page, site, service, form["public_form_key"], "/redirecting.html")
    _fill(page, name="Ada", email="ada@example.com", message="Take me back", topics=[])

    response = click_send(page)

    assert page.url == destination
    assert response.status == 200
    assert page.inner_text("h1") == "Got it"
    stored = service.submissions(form["form_id"])
    assert [s["data"]["message"] for s in stored] == ["Take me back"]


@pytest.mark.parametrize("enctype", ["application/x-www-form-urlencoded", "multipart/form-data"])
def test_checkbox_groups_and_non_ascii_text_are_stored_intact_and_in_order(
    page: Page, site: Site, service: Service, workspace_id: str, enctype: str
) -> None:
    form = service.create_form(workspace_id, "--name", f"Encoding {enctype}")
    _open(page, site, service, form["public_form_key"], "/encoding.html")
    # The snippet says multipart works the same: the very same form, re-encoded.
    page.eval_on_selector("form", "(form, enctype) => { form.enctype = enctype; }", enctype)
    # Clicked out of order: a browser sends the boxes in document order.
    _fill(
        page,
        name=NAME,
        email="zoe@example.com",
        message=MESSAGE,
        topics=["press", "sales", "support"],
    )

    response = click_send(page)

    posted = posted_request(response)
    assert posted.all_headers()["content-type"].startswith(enctype)
    assert page.inner_text("h1") == THANKS_TITLE
    stored = service.submissions(form["form_id"])
    assert len(stored) == 1
    assert stored[0]["data"] == {
        "name": NAME,
        "email": "zoe@example.com",
        "topics": ["sales", "support", "press"],
        "message": MESSAGE,
    }
    assert NAME not in service.log.read_text(encoding="utf-8"), "a submission reached the log"


def test_a_filled_honeypot_lands_on_the_thank_you_page_and_stores_nothing(
    page: Page, site: Site, service: Service, workspace_id: str
) -> None:
    form = service.create_form(workspace_id, "--name", "Honeypot")
    key = form["public_form_key"]
    _open(page, site, service, key, "/honeypot.html")
    _fill(page, name="Bot", email="bot@example.com", message="Buy now", topics=["sales"])
    # What a bot does: fill every field, the hidden one too.
    page.eval_on_selector(
        "input[name=_gotcha]", "field => { field.value = 'http://spam.example'; }"
    )

    response = click_send(page)

    assert posted_request(response).url == f"{service.base}/f/{key}"
    assert page.url == f"{service.base}/f/{key}/thanks"
    assert response.status == 200
    assert page.inner_text("h1") == THANKS_TITLE
    assert service.submissions(form["form_id"]) == []


def test_a_paused_form_shows_the_error_page_with_its_status(
    page: Page, site: Site, service: Service, workspace_id: str, tmp_path: Path
) -> None:
    form = service.create_form(workspace_id, "--name", "Paused")
    service.intake("form", "pause", form["form_id"])
    key = form["public_form_key"]
    _open(page, site, service, key, "/paused.html")
    _fill(page, name="Ada", email="ada@example.com", message="Anyone there?", topics=[])

    response = click_send(page)

    assert page.url == f"{service.base}/f/{key}"
    assert response.status == 403
    assert response.request.method == "POST"
    assert page.inner_text("h1") == "Submission failed"
    assert "This form is not currently accepting submissions." in page.inner_text("body")
    page.screenshot(path=tmp_path / "paused.png")
    assert_real_png(tmp_path / "paused.png")
    assert service.submissions(form["form_id"]) == []


def test_a_submission_failing_validation_shows_the_error_page(
    page: Page, site: Site, service: Service, workspace_id: str, tmp_path: Path
) -> None:
    form = service.create_form(workspace_id, "--name", "Strict", "--rule", "message:max_length=10")
    _open(page, site, service, form["public_form_key"], "/strict.html")
    _fill(page, name="Ada", email="ada@example.com", message="Far longer than ten", topics=[])

    response = click_send(page)

    assert response.status == 422
    assert page.inner_text("h1") == "Submission failed"
    assert "Please check the highlighted fields." in page.inner_text("body")
    assert page.inner_text("li") == "message: Please use at most 10 characters."
    # Cross-origin, the browser's Referer is the page's origin alone: the link leads there.
    assert page.get_attribute("a", "href") == site.origin + "/"
    page.screenshot(path=tmp_path / "invalid.png")
    assert_real_png(tmp_path / "invalid.png")
    assert service.submissions(form["form_id"]) == []
    page.go_back()  # as the page advises: the form again, to correct
    assert page.url.endswith("/strict.html")
