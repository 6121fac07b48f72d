"""Script injection into the HTML pages: the thank-you page and every browser error page.

Hostile markup goes in through every value a sender controls (field names and values,
control fields, the path, the query, Origin, X-Request-ID, the Idempotency-Key, the
challenge token, the content type) and through the form's own name. Each page is parsed:
its elements, attributes and text must be exactly the page's own, with nothing from the
request but, on a validation page, the names of the fields (as text, escaped) and, on a
page that links back to the form, a Referer on the form's origins (percent-encoded); the
headers must forbid scripts, framing and sniffing besides.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from html.parser import HTMLParser
from urllib.parse import quote

import httpx2
import pytest

from intake.domain.model import Challenge, ChallengeProvider, FieldRule, FormMode, RuleKind
from intake.entrypoints.http.pages import BACK_ADVICE, BACK_LINK
from tests.http.conftest import (
    BROWSER_ACCEPT,
    SPEC_ERRORS,
    Backend,
    MemoryBackend,
    Seeded,
    Service,
)

MARK = "pwn7x"  # in every payload; must never come back in a page or a header
PAYLOADS = [
    f"<script>alert('{MARK}')</script>",
    f'"><img src=x onerror=alert("{MARK}")>',
    f"'><svg onload=alert('{MARK}')>",
    f"</title></style><script>{MARK}()</script>",
    f"<!--{MARK}-->",
    f"javascript:{MARK}()",
    f"<a href='javascript:{MARK}()'>x</a>",
]
HOSTILE = "".join(PAYLOADS)
# Printable ASCII, so that it can travel in a header too.
HOSTILE_HEADER = f'"><script>{MARK}()</script><img src=x onerror={MARK}>'
# No `/`, so that it stays one path segment.
HOSTILE_SEGMENT = f'"><img src=x onerror={MARK}()><svg onload={MARK}>'

PAGE_TAGS = ["html", "head", "meta", "meta", "meta", "title", "style", "body", "h1", "p"]
PAGE_ATTRIBUTES = {
    ("html", "lang", "en"),
    ("meta", "charset", "utf-8"),
    ("meta", "name", "viewport"),
    ("meta", "content", "width=device-width, initial-scale=1"),
    ("meta", "name", "robots"),
    ("meta", "content", "noindex"),
}
TITLES = {"Thank you", "Submission failed", "Please try again"}
THANKS_MESSAGE = "Your submission has been received."
# What a page may say after its message: how to put the refusal right, and the way back.
ADVICE = {BACK_ADVICE, "Shorten your answers or send smaller files, then try again."}


@pytest.fixture
def backend() -> Backend:
    """Pages are rendered apart from storage: one backend is enough here."""
    return MemoryBackend()


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: set[tuple[str, str, str | None]] = set()
        self.texts: list[str] = []
        self.items: list[str] = []  # the texts of list items: field names and messages
        self.style = ""
        self.other: list[str] = []  # comments, declarations besides the doctype, PIs
        self._in_style = False
        self._in_item = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.update((tag, name, value) for name, value in attrs)
        self._in_style = tag == "style"
        self._in_item = tag == "li"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False
        self._in_item = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data
        elif self._in_item:
            self.items.append(data)
        elif data.strip():
            self.texts.append(data.strip())

    def handle_comment(self, data: str) -> None:
        self.other.append(f"comment {data!r}")

    def handle_decl(self, decl: str) -> None:
        if decl.lower() != "doctype html":
            self.other.append(f"declaration {decl!r}")

    def handle_pi(self, data: str) -> None:
        self.other.append(f"processing instruction {data!r}")

    def unknown_decl(self, data: str) -> None:
        self.other.append(f"declaration {data!r}")


def _csp(response: httpx2.Response) -> dict[str, list[str]]:
    directives: dict[str, list[str]] = {}
    for part in response.headers["content-security-policy"].split(";"):
        name, *values = part.split()
        directives[name.lower()] = values
    return directives


def assert_clean_page(
    response: httpx2.Response,
    status: int,
    message: str,
    *,
    origin: str | None = None,
    link: str | None = None,
) -> None:
    """The page is the service's own, exactly, and nothing of the request came back but
    field names, as the text of list items, and `link`, the one link's address."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    page = _Page()
    page.feed(response.text)
    page.close()
    assert page.tags[: len(PAGE_TAGS)] == PAGE_TAGS
    after = page.tags[len(PAGE_TAGS) :]
    items = ["ul", *["li"] * len(page.items)] if page.items else []
    assert after == items + ["p"] * (len(after) - len(items) - bool(link)) + ["a"] * bool(link)
    assert page.attributes == PAGE_ATTRIBUTES | ({("a", "href", link)} if link else set())
    assert page.other == []
    title, heading, text, *advice = page.texts
    assert title == heading
    assert title in TITLES
    assert text == message
    assert set(advice) <= ADVICE | ({BACK_LINK} if link else set())
    for item in page.items:  # `name: message`, the name as it was sent
        assert ": " in item
    outside = response.text
    if page.items:
        outside = outside[: outside.index("<ul>")] + outside[outside.index("</ul>") :]
    if link:
        outside = outside.replace(html.escape(link), "")
    assert MARK not in outside.lower()
    assert "<script" not in response.text.lower()
    for name, value in response.headers.items():
        if name == "access-control-allow-origin":
            assert value == origin  # the echo CORS asks for, in a header, never in HTML
        else:
            assert MARK not in value.lower(), (name, value)
    directives = _csp(response)
    assert directives["default-src"] == ["'none'"]
    assert "script-src" not in directives
    assert "'unsafe-inline'" not in directives.get("script-src", [])
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"]
    assert directives["form-action"] == ["'none'"]
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-request-id"].startswith("req_")


def _browser_headers(**extra: str) -> dict[str, str]:
    return {
        "accept": BROWSER_ACCEPT,
        "x-request-id": HOSTILE_HEADER,
        "referer": f"https://evil.example/{HOSTILE_HEADER}",
        "user-agent": HOSTILE_HEADER,
        "cookie": f"session={quote(HOSTILE_HEADER)}",
        **extra,
    }


def _hostile_fields() -> dict[str, str]:
    return {
        "message": HOSTILE,
        HOSTILE_SEGMENT: "a field named in markup",
        "_subject": HOSTILE,
        "_next": f"https://evil.example/{HOSTILE}",
    }


def test_the_thank_you_page_reflects_nothing_of_the_request(seeded: Seeded) -> None:
    response = seeded.svc.client.get(
        f"/f/{quote(HOSTILE_SEGMENT, safe='')}/thanks?q={quote(HOSTILE, safe='')}",
        headers=_browser_headers(origin=HOSTILE_HEADER),
    )

    assert_clean_page(response, 200, THANKS_MESSAGE, origin=HOSTILE_HEADER)


def test_the_thank_you_page_of_a_real_form_after_a_hostile_submission_is_clean(
    seeded: Seeded,
) -> None:
    posted = seeded.svc.public(
        seeded.form.public_form_key, headers=_browser_headers(), data=_hostile_fields()
    )
    followed = seeded.svc.client.get(posted.headers["location"], headers=_browser_headers())

    assert posted.status_code == 303
    assert_clean_page(followed, 200, THANKS_MESSAGE)


def _message(code: str) -> str:
    return SPEC_ERRORS[code][1]


def _status(code: str) -> int:
    return SPEC_ERRORS[code][0]


Scenario = Callable[[Seeded], httpx2.Response]


def _unknown_form(s: Seeded) -> httpx2.Response:
    return s.svc.client.post(
        f"/f/{quote(HOSTILE_SEGMENT, safe='')}", headers=_browser_headers(), data=_hostile_fields()
    )


def _protected(s: Seeded) -> httpx2.Response:
    s.svc.update_form(s.form.form_id, mode=FormMode.PROTECTED)
    return s.svc.public(s.form.public_form_key, headers=_browser_headers(), data=_hostile_fields())


def _off_list_origin(s: Seeded) -> httpx2.Response:
    s.svc.update_form(s.form.form_id, allowed_origins=["https://shop.example"])
    return s.svc.public(
        s.form.public_form_key,
        headers=_browser_headers(origin=HOSTILE_HEADER),
        data=_hostile_fields(),
    )


def _content_type(s: Seeded) -> httpx2.Response:
    return s.svc.public(
        s.form.public_form_key,
        headers=_browser_headers(**{"content-type": f"text/{HOSTILE_HEADER}"}),
        content=HOSTILE.encode(),
    )


def _bad_json(s: Seeded) -> httpx2.Response:
    return s.svc.public(
        s.form.public_form_key,
        headers=_browser_headers(**{"content-type": "application/json"}),
        content=f'{{"message": "{HOSTILE}"'.encode(),
    )


def _too_large(s: Seeded) -> httpx2.Response:
    return s.svc.public(
        s.form.public_form_key,
        headers=_browser_headers(),
        data={"message": HOSTILE * (30_000 // len(HOSTILE))},
    )


def _invalid(s: Seeded) -> httpx2.Response:
    s.svc.update_form(
        s.form.form_id,
        name=HOSTILE,
        rules=[FieldRule(field=HOSTILE_SEGMENT, kind=RuleKind.REQUIRED)],
    )
    return s.svc.public(
        s.form.public_form_key,
        headers=_browser_headers(),
        data={"email": HOSTILE, "_replyto": HOSTILE, "message": HOSTILE},
    )


def _file_part(s: Seeded) -> httpx2.Response:
    return s.svc.public(
        s.form.public_form_key,
        headers=_browser_headers(),
        files={HOSTILE_HEADER: (f"{HOSTILE_HEADER}.html", HOSTILE.encode(), "text/html")},
    )


def _conflict(s: Seeded) -> httpx2.Response:
    key = HOSTILE_HEADER
    s.svc.public(s.form.public_form_key, idempotency_key=key, data={"message": "first"})
    return s.svc.public(
        s.form.public_form_key,
        idempotency_key=key,
        headers=_browser_headers(),
        data=_hostile_fields(),
    )


def _challenge(s: Seeded) -> httpx2.Response:
    s.svc.update_form(s.form.form_id, challenge=Challenge(ChallengeProvider.TURNSTILE, "secret"))
    return s.svc.public(
        s.form.public_form_key,
        headers=_browser_headers(**{"x-challenge-token": HOSTILE_HEADER}),
        data={**_hostile_fields(), "cf-turnstile-response": HOSTILE},
    )


def _rate_limited(s: Seeded) -> httpx2.Response:
    for _ in range(5):
        s.svc.public(s.form.public_form_key, data={"message": "hello"})
    return s.svc.public(s.form.public_form_key, headers=_browser_headers(), data=_hostile_fields())


def _paused(s: Seeded) -> httpx2.Response:
    s.svc.update_form(s.form.form_id, enabled=False)
    return s.svc.public(s.form.public_form_key, headers=_browser_headers(), data=_hostile_fields())


def _store_down(s: Seeded) -> httpx2.Response:
    s.svc.fail_commits()
    return s.svc.public(s.form.public_form_key, headers=_browser_headers(), data=_hostile_fields())


def _server_route_bad_key(s: Seeded) -> httpx2.Response:
    return s.svc.server(
        s.form.form_id,
        HOSTILE_HEADER,
        headers=_browser_headers(),
        data=_hostile_fields(),
    )


SCENARIOS: list[tuple[str, str, Scenario]] = [
    ("unknown form key in the path", "form_not_found", _unknown_form),
    ("protected form", "unauthorized", _protected),
    ("origin off the list", "origin_not_allowed", _off_list_origin),
    ("hostile content type", "unsupported_content_type", _content_type),
    ("broken JSON", "malformed_request", _bad_json),
    ("body too large", "payload_too_large", _too_large),
    ("invalid fields and a hostile form name", "validation_failed", _invalid),
    ("file part named in markup", "validation_failed", _file_part),
    ("idempotency conflict", "idempotency_conflict", _conflict),
    ("challenge token", "challenge_failed", _challenge),
    ("rate limited", "rate_limited", _rate_limited),
    ("paused form", "form_disabled", _paused),
    ("storage failure", "service_unavailable", _store_down),
    ("server route with a hostile key", "unauthorized", _server_route_bad_key),
]


@pytest.mark.parametrize(
    ("code", "scenario"),
    [pytest.param(code, scenario, id=name) for name, code, scenario in SCENARIOS],
)
def test_a_browser_error_page_holds_nothing_but_its_own_markup(
    seeded: Seeded, code: str, scenario: Scenario
) -> None:
    response = scenario(seeded)

    origin = HOSTILE_HEADER if scenario is _off_list_origin else None
    assert_clean_page(response, _status(code), _message(code), origin=origin)
    for submission in seeded.svc.submissions(seeded.form.form_id):
        assert MARK not in json.dumps([submission.subject, submission.data])


def test_a_validation_page_names_hostile_fields_as_text_only(seeded: Seeded) -> None:
    response = _file_part(seeded)

    page = _Page()
    page.feed(response.text)
    # The client sends a `"` in a part's name as %22, as browsers do.
    name = HOSTILE_HEADER.replace('"', "%22")
    assert page.items == [f"{name}: File uploads are not accepted."]


def test_a_hostile_referer_on_the_forms_own_origin_is_a_harmless_link(seeded: Seeded) -> None:
    seeded.svc.update_form(
        seeded.form.form_id, rules=[FieldRule(field="email", kind=RuleKind.REQUIRED)]
    )
    markup = f'"><script>{MARK}()</script><img/src=x/onerror={MARK}>'  # no space: a URL
    referer = f"https://shop.example/{markup}?q='{MARK}'"

    response = seeded.svc.public(
        seeded.form.public_form_key,
        headers=_browser_headers(referer=referer, origin="https://shop.example"),
        data={"message": "hello"},
    )

    link = "https://shop.example/" + quote(markup, safe="!#$%&'()*+,/:;=?@[]~")
    link += f"?q='{MARK}'"
    assert_clean_page(
        response,
        _status("validation_failed"),
        _message("validation_failed"),
        origin="https://shop.example",
        link=link,
    )


def test_a_wrong_method_page_reflects_nothing(seeded: Seeded) -> None:
    response = seeded.svc.client.put(
        f"/f/{seeded.form.public_form_key}", headers=_browser_headers(), content=HOSTILE.encode()
    )

    assert_clean_page(response, 405, _message("malformed_request"))


def test_an_unknown_path_page_reflects_nothing(seeded: Seeded) -> None:
    response = seeded.svc.client.get(
        f"/{quote(HOSTILE, safe='')}?{quote(HOSTILE, safe='')}", headers=_browser_headers()
    )

    assert_clean_page(response, 404, _message("form_not_found"))


def test_a_json_answer_naming_a_hostile_field_is_json_and_never_sniffed(svc: Service) -> None:
    seeded = Seeded(svc)
    name = f"<script>{MARK}()</script><img src=x onerror={MARK}>"  # no `"`: sent as it is
    response = seeded.svc.public(
        seeded.form.public_form_key, files={name: ("a.html", HOSTILE.encode(), "text/html")}
    )

    assert response.status_code == 422
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-content-type-options"] == "nosniff"
    # The name comes back as JSON data, not markup: decoded, it is the name as sent.
    assert list(json.loads(response.text)["error"]["fields"]) == [name]
