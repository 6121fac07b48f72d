"""The notification mail links to the submission's page in the dashboard when the
service knows its public address, in both parts, escaped in the HTML one."""

from __future__ import annotations

from html.parser import HTMLParser

from intake.domain.notifications import dashboard_link, render_notification
from tests.unit.test_notifications import payload, round_trip, text_of

SUBMISSION = "sub_01hzx5k7w3e8q2r9t6y4u1i0op"


def _render(base_url: str | None, submission_id: str = SUBMISSION) -> tuple[str, str]:
    event = {**payload(), "submission_id": submission_id}
    message = round_trip(
        render_notification(
            event,
            form_name="Contact",
            mail_from="intake@forms.example.org",
            to="owner@example.com",
            base_url=base_url,
        )
    )
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return text_of(message), str(part.get_content())


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs.extend(value or "" for name, value in attrs if name == "href")


def _hrefs(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    return parser.hrefs


def test_both_parts_link_to_the_submission_page() -> None:
    text, html = _render("https://forms.example.org/")

    page = f"https://forms.example.org/dashboard/submissions/{SUBMISSION}"
    assert f"Open it in the dashboard: {page}" in text
    assert _hrefs(html) == [page]


def test_without_a_base_address_there_is_no_link() -> None:
    text, html = _render(None)

    assert "/dashboard/" not in text
    assert _hrefs(html) == []


def test_the_link_is_quoted_and_escaped() -> None:
    odd = 'sub_"><script>x</script>&'

    text, html = _render('https://forms.example.org/a"b<c>', odd)

    link = dashboard_link('https://forms.example.org/a"b<c>', odd)
    assert link is not None
    assert link.endswith("/dashboard/submissions/sub_%22%3E%3Cscript%3Ex%3C%2Fscript%3E%26")
    assert link in text
    assert "<script>" not in html
    assert 'a"b<c>' not in html
    assert _hrefs(html) == [link]
    assert dashboard_link("https://forms.example.org", "") is None
