"""The inbox's tools, on every store: counts on the status tabs under the search and
dates (one capped count a status), the total, a previous page, every row selected at
once without a script, and each row's checkbox named by its sender, subject and time."""

from __future__ import annotations

import re

import pytest

from intake.entrypoints.http.dashboard import inbox as inbox_page
from intake.entrypoints.http.dashboard import wording
from intake.service.admin import listing
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard, isolated
from tests.http.test_dashboard_inbox import ID, Inbox


@pytest.fixture
def inbox(make_service: ServiceFactory) -> Inbox:
    dash = Dashboard(make_service())
    dash.set_password(dash.link("owner@example.com"))
    return Inbox(dash)


TAB = re.compile(r'\?status=(\w+)[^"]*"[^>]*>\1 <span class="tab-count">([\d,+]+)</span>')
CHECKED = re.compile(r'name="id" value="[^"]+" checked>')


def _tabs(html: str) -> dict[str, str]:
    tabs = html.split('<nav aria-label="Status"', 1)[1].split("</nav>", 1)[0]
    return dict(TAB.findall(tabs))


def _link(html: str, text: str) -> str | None:
    found = re.search(rf'href="([^"]+)"[^>]*>{text}</a>', html)
    return None if found is None else found.group(1).replace("&amp;", "&")


def test_the_tabs_count_each_status_under_the_search_and_dates(inbox: Inbox) -> None:
    for n in range(3):
        inbox.submit(message=f"apple {n}")
    inbox.submit(message="pear")
    inbox.spam(message="apple spam")

    whole = inbox.get()
    searched = inbox.get("?status=spam&q=apple")
    later = inbox.get("?since=2999-01-01")

    assert _tabs(whole.text) == {"accepted": "4", "spam": "1", "unverified": "0"}
    assert "Showing 4 of 4 accepted submissions." in whole.text
    assert _tabs(searched.text) == {"accepted": "3", "spam": "1", "unverified": "0"}
    assert "Showing 1 of 1 spam submission that match the search and dates." in searched.text
    assert _tabs(later.text) == {"accepted": "0", "spam": "0", "unverified": "0"}
    assert "0 accepted submissions that match the search and dates." in later.text


def test_a_count_past_the_limit_says_so(inbox: Inbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(listing, "COUNT_LIMIT", 2)
    monkeypatch.setattr(wording, "COUNT_LIMIT", 2)
    for n in range(4):
        inbox.submit(message=f"m{n}")

    page = inbox.get()

    assert _tabs(page.text)["accepted"] == "2+"
    assert "Showing 4 of 2+ accepted submissions." in page.text


def test_previous_pages_go_back_one_page_at_a_time(
    inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbox_page, "PAGE_SIZES", (2, 50))
    # Newest first is highest id first (ids made within one millisecond sort at random).
    made = sorted((inbox.submit(message=f"m{n}") for n in range(5)), reverse=True)

    first = inbox.get()
    second = inbox.dash.client.get(_link(first.text, "Next page") or "")
    third = inbox.dash.client.get(_link(second.text, "Next page") or "")
    back_to_second = inbox.dash.client.get(_link(third.text, "Previous page") or "")
    back_to_first = inbox.dash.client.get(_link(back_to_second.text, "Previous page") or "")

    assert _link(first.text, "Previous page") is None
    assert ID.findall(third.text) == made[4:]
    assert ID.findall(back_to_second.text) == made[2:4]
    assert ID.findall(back_to_first.text) == made[:2]
    assert _link(back_to_first.text, "Previous page") is None
    assert _link(back_to_second.text, "Next page") is not None
    # The filter goes with it: back from the second page of a search.
    searched = inbox.get("?q=m")
    second_searched = inbox.dash.client.get(_link(searched.text, "Next page") or "")
    back = _link(second_searched.text, "Previous page") or ""
    assert "q=m" in back
    assert ID.findall(inbox.dash.client.get(back).text) == made[:2]


def test_select_all_on_the_page_works_without_a_script(inbox: Inbox) -> None:
    made = [inbox.submit(message=f"m{n}") for n in range(3)]

    page = inbox.get()
    select = _link(page.text, "Select all 3 on this page")
    assert select is not None
    selected = inbox.dash.client.get(select)

    assert CHECKED.findall(page.text) == []
    assert len(CHECKED.findall(selected.text)) == 3
    assert (
        _link(selected.text, "Clear the selection") == inbox.path + "?status=accepted#submissions"
    )
    assert set(ID.findall(selected.text)) == set(made)


def test_each_rows_checkbox_is_named_by_its_sender_subject_and_time(inbox: Inbox) -> None:
    inbox.submit(_replyto="ada@example.com", _subject="Quote \u202ereversed", message="hi")
    inbox.submit(message="just a message")
    time = inbox.svc.clock.now().strftime("%Y-%m-%d %H:%M UTC")

    page = inbox.get().text
    labels = re.findall(r'<label for="pick-\d+" class="visually-hidden">(.*?)</label>', page)

    sender, subject = isolated("ada@example.com"), "Quote "
    assert any(
        label.startswith(f'Select {sender}, <bdi dir="auto">{subject}') and label.endswith(time)
        for label in labels
    )
    assert "\u202e" not in page  # the override shown as a marker, never acting
    assert f"Select {isolated('just a message')}, {time}" in labels
