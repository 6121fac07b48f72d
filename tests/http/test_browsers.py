"""Browsers: the 303 after success, the thank-you page and the HTML error page
(decisions.md "Browsers")."""

from __future__ import annotations

import html
from html.parser import HTMLParser

import httpx2
import pytest

from intake.domain.model import FieldRule, RuleKind
from tests.http.conftest import (
    BROWSER_ACCEPT,
    SPEC_ERRORS,
    Seeded,
    assert_error,
)

FIELDS = {"name": "Ada", "message": "Hello"}
HOSTILE = '<script>alert("x")</script>'


def _browser(seeded: Seeded, data: dict[str, str], **kwargs: object) -> httpx2.Response:
    headers = {"accept": BROWSER_ACCEPT, **dict(kwargs.pop("headers", {}))}  # type: ignore[call-overload]
    return seeded.svc.public(seeded.form.public_form_key, data=data, headers=headers, **kwargs)  # type: ignore[arg-type]


def _thanks(seeded: Seeded) -> str:
    return f"/f/{seeded.form.public_form_key}/thanks"


def test_a_browser_is_sent_to_the_forms_redirect_url(seeded: Seeded) -> None:
    seeded.svc.update_form(seeded.form.form_id, redirect_url="https://shop.example/thanks")

    response = _browser(seeded, {**FIELDS, "_next": "https://shop.example/other"})

    assert response.status_code == 303
    assert response.headers["location"] == "https://shop.example/thanks"
    assert response.content == b""
    assert seeded.svc.stored() == (1, 1)


def test_a_browser_is_sent_to_next_on_the_requests_own_origin(seeded: Seeded) -> None:
    response = _browser(
        seeded, {**FIELDS, "_next": "https://shop.example/done?x=1"}, origin="https://shop.example"
    )

    assert response.status_code == 303
    assert response.headers["location"] == "https://shop.example/done?x=1"


def test_a_path_next_sends_the_browser_to_that_path_on_the_submitting_pages_origin(
    seeded: Seeded,
) -> None:
    response = _browser(seeded, {**FIELDS, "_next": "/done?x=1"}, origin="https://shop.example")

    assert response.status_code == 303
    assert response.headers["location"] == "https://shop.example/done?x=1"


def test_a_path_next_without_an_origin_to_resolve_it_gets_the_thank_you_page(
    seeded: Seeded,
) -> None:
    response = _browser(seeded, {**FIELDS, "_next": "/done"})

    assert response.status_code == 303
    assert response.headers["location"] == _thanks(seeded)


def test_a_browser_is_sent_to_next_on_the_allowed_list(seeded: Seeded) -> None:
    seeded.svc.update_form(
        seeded.form.form_id, allowed_origins=["https://shop.example", "https://www.shop.example"]
    )

    response = _browser(
        seeded,
        {**FIELDS, "_next": "https://www.shop.example/done"},
        origin="https://shop.example",
    )

    assert response.status_code == 303
    assert response.headers["location"] == "https://www.shop.example/done"


@pytest.mark.parametrize(
    "next_url",
    [
        "https://evil.example/phish",
        "//evil.example/phish",
        "javascript:alert(1)",
        "https://shop.example.evil.example/",
        "http://shop.example/downgraded",
        "relative/path",
        "/\\evil.example/",
        "\\\\evil.example/",
    ],
)
def test_an_off_list_next_goes_to_the_thank_you_page_never_an_open_redirect(
    seeded: Seeded, next_url: str
) -> None:
    response = _browser(seeded, {**FIELDS, "_next": next_url}, origin="https://shop.example")

    assert response.status_code == 303
    assert response.headers["location"] == _thanks(seeded)


def test_without_a_redirect_a_browser_gets_the_thank_you_page(seeded: Seeded) -> None:
    response = _browser(seeded, FIELDS)

    assert response.status_code == 303
    assert response.headers["location"] == _thanks(seeded)


@pytest.mark.parametrize(
    "next_url",
    [
        "https://shop.example/done\r\nSet-Cookie: session=stolen",
        "https://shop.example/\x01done",
    ],
)
def test_a_next_with_control_characters_cannot_forge_headers(seeded: Seeded, next_url: str) -> None:
    response = _browser(seeded, {**FIELDS, "_next": next_url}, origin="https://shop.example")

    assert response.status_code == 303
    assert "set-cookie" not in response.headers
    assert response.headers["location"] == _thanks(seeded)
    assert seeded.svc.stored() == (1, 1)


def test_a_next_with_non_latin_characters_is_a_success_not_an_error(seeded: Seeded) -> None:
    response = _browser(
        seeded, {**FIELDS, "_next": "https://shop.example/谢谢?q=é"}, origin="https://shop.example"
    )

    # Committed, so it must stay a success: the address is sent percent-encoded.
    assert response.status_code == 303
    assert response.headers["location"] == ("https://shop.example/%E8%B0%A2%E8%B0%A2?q=%C3%A9")
    assert seeded.svc.stored() == (1, 1)


def test_a_configured_redirect_url_is_sent_percent_encoded(seeded: Seeded) -> None:
    seeded.svc.update_form(seeded.form.form_id, redirect_url="https://shop.example/merci-é")

    response = _browser(seeded, FIELDS)

    assert response.status_code == 303
    assert response.headers["location"] == "https://shop.example/merci-%C3%A9"


def test_a_replay_from_a_browser_is_redirected_too(seeded: Seeded) -> None:
    first = _browser(seeded, FIELDS, idempotency_key="b-1")

    replay = _browser(seeded, FIELDS, idempotency_key="b-1")

    assert first.status_code == replay.status_code == 303
    assert replay.headers["location"] == _thanks(seeded)
    assert replay.headers["idempotent-replayed"] == "true"
    assert seeded.svc.stored() == (1, 1)


def test_a_honeypot_bot_is_redirected_like_anyone(seeded: Seeded) -> None:
    response = _browser(seeded, {**FIELDS, "_gotcha": "bot"})

    assert response.status_code == 303
    assert response.headers["location"] == _thanks(seeded)
    assert seeded.svc.stored() == (0, 0)


def test_the_thank_you_page_is_html(seeded: Seeded) -> None:
    response = seeded.svc.client.get(_thanks(seeded), headers={"accept": BROWSER_ACCEPT})

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "<html" in response.text
    assert "Thank you" in response.text
    assert "script-src" not in response.headers["content-security-policy"]


# -- failures a browser sees ------------------------------------------------------------


def test_a_browser_failure_is_an_html_page_with_the_message_and_the_status(
    seeded: Seeded,
) -> None:
    seeded.svc.update_form(seeded.form.form_id, rules=[FieldRule("email", RuleKind.REQUIRED)])

    response = _browser(seeded, {"name": HOSTILE, HOSTILE: "x"}, origin="https://x.example")

    status, message = SPEC_ERRORS["validation_failed"]
    assert response.status_code == status
    assert response.headers["content-type"].startswith("text/html")
    assert html.escape(message) in response.text
    _assert_nothing_reflected(response)


@pytest.mark.parametrize(
    ("code", "setup"),
    [
        ("form_not_found", "unknown"),
        ("form_disabled", "paused"),
        ("unsupported_content_type", "text"),
        ("payload_too_large", "huge"),
    ],
)
def test_every_browser_failure_keeps_its_status_and_public_message(
    seeded: Seeded, code: str, setup: str
) -> None:
    key = seeded.form.public_form_key
    headers = {"accept": BROWSER_ACCEPT}
    content = f"name={HOSTILE}".encode()
    if setup == "unknown":
        key = "no-such-key"
    if setup == "paused":
        seeded.svc.update_form(seeded.form.form_id, enabled=False)
    headers["content-type"] = (
        "text/plain" if setup == "text" else "application/x-www-form-urlencoded"
    )
    if setup == "huge":
        content = b"message=" + b"x" * 30_000

    response = seeded.svc.public(key, content=content, headers=headers)

    status, message = SPEC_ERRORS[code]
    assert response.status_code == status
    assert response.headers["content-type"].startswith("text/html")
    assert html.escape(message) in response.text
    _assert_nothing_reflected(response)


class _Parts(HTMLParser):
    """The list items, the links and the paragraphs of a page, as text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.items: list[str] = []
        self.links: list[tuple[str | None, str]] = []
        self.paragraphs: list[str] = []
        self._open: list[str] = []
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open.append(tag)
        if tag == "li":
            self.items.append("")
        elif tag == "p":
            self.paragraphs.append("")
        elif tag == "a":
            self._href = dict(attrs).get("href")
            self.links.append((self._href, ""))

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if "li" in self._open:
            self.items[-1] += data
        if "p" in self._open:
            self.paragraphs[-1] += data
        if "a" in self._open:
            href, text = self.links[-1]
            self.links[-1] = (href, text + data)


def _parts(response: httpx2.Response) -> _Parts:
    parts = _Parts()
    parts.feed(response.text)
    parts.close()
    return parts


BACK = "Use your browser's back button to return to the form; it usually keeps what you typed."


def test_a_validation_page_lists_each_fields_message_escaped(seeded: Seeded) -> None:
    seeded.svc.update_form(
        seeded.form.form_id,
        rules=[FieldRule("email", RuleKind.REQUIRED), FieldRule(HOSTILE, RuleKind.NUMBER)],
    )

    response = _browser(seeded, {"name": "Ada", HOSTILE: "many"})

    assert response.status_code == 422
    parts = _parts(response)
    assert parts.items == [
        "email: This field is required.",
        f"{HOSTILE}: Please enter a number.",
    ]
    assert html.escape(HOSTILE) in response.text  # shown as text, never as markup
    assert "<script" not in response.text
    assert BACK in parts.paragraphs
    assert parts.links == []  # no Referer: nothing to link back to


@pytest.mark.parametrize(
    ("referer", "origin", "allowed"),
    [
        pytest.param("https://shop.example/contact?x=1", "https://shop.example", [], id="own"),
        pytest.param(
            "https://www.shop.example/contact",
            "https://shop.example",
            ["https://shop.example", "https://*.shop.example"],
            id="allowed",
        ),
    ],
)
def test_a_validation_page_links_back_to_a_submitting_page_on_an_allowed_origin(
    seeded: Seeded, referer: str, origin: str, allowed: list[str]
) -> None:
    seeded.svc.update_form(
        seeded.form.form_id, rules=[FieldRule("email", RuleKind.REQUIRED)], allowed_origins=allowed
    )

    response = _browser(seeded, {"name": "Ada"}, origin=origin, headers={"referer": referer})

    assert response.status_code == 422
    assert _parts(response).links == [(referer, "Back to the page you came from")]


@pytest.mark.parametrize(
    ("referer", "origin"),
    [
        pytest.param("https://evil.example/contact", "https://shop.example", id="other origin"),
        pytest.param("https://evil.example/contact", None, id="no origin"),
        pytest.param("javascript:alert(1)", "https://shop.example", id="javascript"),
        pytest.param("//evil.example/x", "https://shop.example", id="scheme-relative"),
        pytest.param("/contact", "https://shop.example", id="a path"),
        pytest.param("https://evil.example\\@shop.example/", "https://shop.example", id="slash"),
        pytest.param("data:text/html,<script>x</script>", "https://shop.example", id="data"),
    ],
)
def test_a_validation_page_never_links_off_the_allowed_origins(
    seeded: Seeded, referer: str, origin: str | None
) -> None:
    seeded.svc.update_form(seeded.form.form_id, rules=[FieldRule("email", RuleKind.REQUIRED)])
    headers = {"referer": referer}

    response = _browser(seeded, {"name": "Ada"}, origin=origin, headers=headers)

    assert response.status_code == 422
    parts = _parts(response)
    assert parts.links == []
    assert BACK in parts.paragraphs
    assert "evil" not in response.text
    assert "javascript" not in response.text


def test_a_too_large_page_says_what_to_do_and_how_to_go_back(seeded: Seeded) -> None:
    response = _browser(
        seeded,
        {"message": "x" * 30_000},
        origin="https://shop.example",
        headers={"referer": "https://shop.example/contact"},
    )

    assert response.status_code == 413
    parts = _parts(response)
    assert parts.paragraphs[0] == SPEC_ERRORS["payload_too_large"][1]
    assert "Shorten your answers or send smaller files, then try again." in parts.paragraphs
    assert BACK in parts.paragraphs
    assert parts.links == [("https://shop.example/contact", "Back to the page you came from")]


def test_a_page_the_form_cannot_fix_offers_no_way_back(seeded: Seeded) -> None:
    seeded.svc.update_form(seeded.form.form_id, enabled=False)

    response = _browser(
        seeded,
        FIELDS,
        origin="https://shop.example",
        headers={"referer": "https://shop.example/contact"},
    )

    assert response.status_code == 403
    parts = _parts(response)
    assert parts.paragraphs == [SPEC_ERRORS["form_disabled"][1]]
    assert parts.links == []


def test_a_rate_limited_browser_gets_the_page_and_retry_after(seeded: Seeded) -> None:
    for _ in range(5):
        _browser(seeded, FIELDS)

    response = _browser(seeded, FIELDS)

    assert response.status_code == 429
    assert response.headers["content-type"].startswith("text/html")
    assert int(response.headers["retry-after"]) >= 1


def test_an_unknown_path_answers_a_browser_with_a_page(seeded: Seeded) -> None:
    response = seeded.svc.client.get(f"/nothing/{HOSTILE}", headers={"accept": BROWSER_ACCEPT})

    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    _assert_nothing_reflected(response)


def _assert_nothing_reflected(response: httpx2.Response) -> None:
    page = response.text
    for needle in ("script", "alert", "Ada", "x.example", "no-such-key", "nothing"):
        assert needle not in page, needle
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"


# -- clients that are not browsers ------------------------------------------------------


@pytest.mark.parametrize(
    "accept",
    [
        "*/*",
        "application/json",
        "application/json, text/plain, */*",
        "text/html;q=0.5, application/json",
        None,
    ],
)
def test_a_fetch_style_accept_gets_json(seeded: Seeded, accept: str | None) -> None:
    headers = {} if accept is None else {"accept": accept}

    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, headers=headers)

    assert response.status_code == 201
    assert response.json()["ok"] is True


def test_a_fetch_style_failure_gets_the_json_envelope(seeded: Seeded) -> None:
    response = seeded.svc.public("no-such-key", data=FIELDS, headers={"accept": "*/*"})

    assert_error(response, "form_not_found")
