"""Origins: normalising, the allow-list with wildcards, and where a browser is sent."""

from __future__ import annotations

import pytest

from intake.domain.origins import (
    normalize_origin,
    normalize_pattern,
    origin_allowed,
    redirect_target,
)


@pytest.mark.parametrize(
    ("value", "origin"),
    [
        ("https://example.com", "https://example.com"),
        ("HTTPS://Example.COM", "https://example.com"),
        ("https://example.com:443", "https://example.com"),
        ("http://example.com:80", "http://example.com"),
        ("http://example.com:443", "http://example.com:443"),
        ("https://example.com:8443", "https://example.com:8443"),
        ("https://example.com/contact?x=1#top", "https://example.com"),
        ("https://example.com/", "https://example.com"),
        ("  https://example.com  ", "https://example.com"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("http://[::1]", "http://[::1]"),
        ("https://[2001:DB8::1]:443/x", "https://[2001:db8::1]"),
        ("http://127.0.0.1:3000", "http://127.0.0.1:3000"),
        ("https://user:pw@example.com", "https://example.com"),
    ],
)
def test_an_origin_is_normalised_to_scheme_host_and_any_other_port(value: str, origin: str) -> None:
    assert normalize_origin(value) == origin


@pytest.mark.parametrize(
    "value",
    [
        "",
        "null",
        "example.com",
        "//example.com",
        "ftp://example.com",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,hi",
        "https://",
        "https://example.com:99999",
        "https://example.com:port",
        "http://[::1",
    ],
)
def test_anything_but_an_http_or_https_origin_is_refused(value: str) -> None:
    assert normalize_origin(value) is None


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ("https://*.example.com", "https://*.example.com"),
        ("HTTPS://*.Example.com/", "https://*.example.com"),
        ("https://*.example.com:443", "https://*.example.com"),
        ("https://*.example.com:8443", "https://*.example.com:8443"),
        ("https://shop.example.com/x", "https://shop.example.com"),
    ],
)
def test_an_allow_list_entry_is_an_origin_or_a_wildcard_pattern(value: str, pattern: str) -> None:
    assert normalize_pattern(value) == pattern


def test_a_wildcard_entry_with_no_usable_base_is_refused() -> None:
    assert normalize_pattern("ftp://*.example.com") is None


ALLOWED = ("https://example.com", "https://*.shop.example", "http://localhost:3000")


@pytest.mark.parametrize(
    "origin",
    [
        "https://example.com",
        "https://EXAMPLE.com:443",
        "https://a.shop.example",
        "https://a.b.shop.example",
        "http://localhost:3000",
    ],
)
def test_an_origin_on_the_list_or_under_a_wildcard_is_allowed(origin: str) -> None:
    assert origin_allowed(origin, ALLOWED)


@pytest.mark.parametrize(
    "origin",
    [
        None,
        "",
        "null",
        "http://example.com",
        "https://example.com:8443",
        "https://sub.example.com",
        "https://shop.example",
        "https://evilshop.example",
        "https://shop.example.evil.com",
        "http://a.shop.example",
        "https://a.shop.example:8443",
        "http://localhost:3001",
        "https://example.com.evil.com",
    ],
)
def test_any_other_origin_is_not_allowed(origin: str | None) -> None:
    assert not origin_allowed(origin, ALLOWED)


def test_nothing_is_allowed_by_an_empty_list() -> None:
    assert not origin_allowed("https://example.com", ())


def test_list_entries_are_compared_normalised() -> None:
    assert origin_allowed("https://example.com", ["HTTPS://Example.com/"])
    assert origin_allowed("https://a.example.com", ["https://*.Example.com:443"])


# --- where a browser is sent after success -------------------------------------------------


def target(
    next_url: str | None,
    *,
    redirect_url: str | None = None,
    request_origin: str | None = "https://site.example",
    allowed: tuple[str, ...] = ("https://allowed.example",),
) -> str | None:
    return redirect_target(
        redirect_url=redirect_url,
        next_url=next_url,
        request_origin=request_origin,
        allowed=allowed,
    )


def test_the_forms_redirect_url_wins_over_next() -> None:
    assert (
        target("https://site.example/thanks", redirect_url="https://owner.example/done")
        == "https://owner.example/done"
    )


def test_next_on_the_requests_own_origin_is_followed() -> None:
    assert target("https://site.example/thanks?x=1") == "https://site.example/thanks?x=1"
    assert target(" https://SITE.example:443/thanks ") == "https://SITE.example:443/thanks"


def test_next_on_an_allowed_origin_is_followed() -> None:
    assert target("https://allowed.example/ok") == "https://allowed.example/ok"


def test_next_on_a_wildcard_allowed_origin_is_followed() -> None:
    assert (
        target("https://a.shop.example/ok", allowed=("https://*.shop.example",))
        == "https://a.shop.example/ok"
    )


@pytest.mark.parametrize(
    "next_url",
    [
        "javascript:alert(document.cookie)",
        "//evil.com",
        "///evil.com",
        "https://evil.com",
        "https://evil.com/https://site.example",
        "https://site.example.evil.com/",
        "https://site.example@evil.com/",
        "http://site.example/",
        "https://evil.com\\@site.example/",
        "https://evil.com\\.site.example/",
        "https://site.example\t.evil.com/",
        "https://site.example/\r\nSet-Cookie: a=b",
        "https:evil.com",
        "data:text/html,<script>alert(1)</script>",
        "",
    ],
)
def test_next_anywhere_else_falls_back_to_the_thank_you_page(next_url: str) -> None:
    assert target(next_url) is None


@pytest.mark.parametrize("space", ["\u2028", "\xa0", "\x85", "\u3000", "\u200b"])
def test_next_with_unicode_whitespace_in_the_host_is_refused(space: str) -> None:
    # `str.strip()` removes these and a browser keeps them: the origin checked must be
    # the one sent on, so such a value is refused, not trimmed a second time.
    assert target(f"https://allowed.example{space}/") is None
    assert target(f"https://site.example{space}/") is None
    assert normalize_origin(f"https://allowed.example{space}") is None
    assert not origin_allowed(f"https://allowed.example{space}", ["https://allowed.example"])


@pytest.mark.parametrize(
    ("next_url", "location"),
    [
        ("/thanks", "https://site.example/thanks"),
        ("/", "https://site.example/"),
        ("/merci?from=contact#top", "https://site.example/merci?from=contact#top"),
        ("/@evil.example", "https://site.example/@evil.example"),
        (" /thanks ", "https://site.example/thanks"),
    ],
)
def test_a_path_next_is_resolved_against_the_requests_origin(next_url: str, location: str) -> None:
    assert target(next_url) == location


def test_a_path_next_takes_the_request_origin_as_normalised() -> None:
    assert target("/ok", request_origin="HTTPS://Site.Example:443") == "https://site.example/ok"


@pytest.mark.parametrize(
    "next_url",
    [
        "//evil.example",
        "//evil.example/path",
        "///evil.example",
        "/\\evil.example",
        "\\\\evil.example",
        "\\/evil.example",
        "/\tevil.example",
        "/\t/evil.example",
        "/\n/evil.example",
        "/\u2028/evil.example",
        "thanks.html",  # relative to a page intake does not know
        "?sent=1",
        "#done",
        "./thanks",
        "../thanks",
    ],
)
def test_a_next_that_is_no_plain_path_is_never_resolved(next_url: str) -> None:
    assert target(next_url) is None


@pytest.mark.parametrize("request_origin", [None, "", "null", "file://", "ftp://site.example"])
def test_a_path_next_without_a_usable_request_origin_is_not_followed(
    request_origin: str | None,
) -> None:
    assert target("/thanks", request_origin=request_origin) is None


def test_without_next_and_redirect_url_the_thank_you_page_is_used() -> None:
    assert target(None) is None


def test_without_a_request_origin_next_needs_an_allowed_origin() -> None:
    assert target("https://site.example/thanks", request_origin=None) is None
    assert target("https://allowed.example/ok", request_origin=None) == "https://allowed.example/ok"
