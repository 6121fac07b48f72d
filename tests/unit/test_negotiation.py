"""Is the caller a browser? One whose Accept prefers text/html over JSON."""

from __future__ import annotations

import pytest

from intake.entrypoints.http.negotiation import prefers_html

FIREFOX = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
CHROME = (
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
    "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
)
SAFARI = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.mark.parametrize(
    "accept",
    [
        FIREFOX,
        CHROME,
        SAFARI,
        "text/html",
        "TEXT/HTML",
        "application/json;q=0.5, text/html",
        "text/html;q=0.9, application/json;q=0.8",
        "text/html, */*;q=0.1",
    ],
)
def test_an_accept_that_prefers_html_is_a_browser(accept: str) -> None:
    assert prefers_html(accept)


@pytest.mark.parametrize(
    "accept",
    [
        None,
        "",
        "*/*",
        "application/json",
        "application/json, text/plain, */*",
        "text/html;q=0.5, application/json",
        "text/html, application/json",  # a tie is not a preference
        "text/html;q=0, */*",
        "application/xhtml+xml",
        "text/html;q=garbage, application/json;q=0.1",
        "text/*;q=0.3, application/*",
        "text/*, application/json;q=0.5",  # only an Accept that names html is a browser
    ],
)
def test_any_other_accept_gets_json(accept: str | None) -> None:
    assert not prefers_html(accept)


def test_the_most_specific_range_decides_a_types_quality() -> None:
    assert prefers_html("text/html;q=0.9, text/*;q=0.1, application/json;q=0.5")
    assert not prefers_html("text/html;q=0.1, text/*;q=0.9, application/json;q=0.5")
