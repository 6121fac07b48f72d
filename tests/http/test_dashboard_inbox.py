"""A form's inbox in the dashboard on every store: status tabs, search, date filters and
pages; the export of the filter; bulk release, spam and delete (confirmed first); bad
query values shown as a message; another workspace's form or submission not found; and
hostile submitted values shown escaped."""

from __future__ import annotations

import json
import re

import httpx2
import pytest

from intake.domain.model import Scope, SubmissionStatus
from intake.domain.users import Role
from intake.entrypoints.http.dashboard import home
from intake.entrypoints.http.dashboard.static_files import static_url
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard

# Also on PostgreSQL (tests/http/conftest.py): search and the status tabs' counts.
pytestmark = pytest.mark.postgres_smoke

ID = re.compile(r'name="id" value="([^"]+)"')
FORM_LINK = re.compile(r'<td[^>]*><a href="/dashboard/forms/(frm_\w+)">')
SITE = "https://example.com/"  # a link: scores above a threshold of 0.001


class Inbox:
    def __init__(self, dash: Dashboard) -> None:
        self.dash = dash
        self.svc = dash.svc
        self.form_id = dash.form.form_id
        self.path = f"/dashboard/forms/{self.form_id}"
        created = self.svc.run(
            self.svc.services.keys.create,
            dash.workspace.workspace_id,
            scopes=frozenset({Scope.SUBMIT}),
        )
        self.secret = created.secret

    def submit(self, form_id: str | None = None, secret: str | None = None, **data: str) -> str:
        answer = self.svc.server(form_id or self.form_id, secret or self.secret, json=data)
        assert answer.status_code == 201, answer.text
        submission_id: str = answer.json()["submission_id"]
        return submission_id

    def spam(self, **data: str) -> str:
        self.svc.update_form(self.form_id, spam_threshold=0.001)
        submission_id = self.submit(site=SITE, **data)
        self.svc.update_form(self.form_id, spam_threshold=0.5)
        return submission_id

    def status(self, submission_id: str) -> SubmissionStatus | None:
        found = self.svc.run(self.svc.store.submissions.get, submission_id)
        return None if found is None else found.status

    def get(self, query: str = "") -> httpx2.Response:
        return self.dash.client.get(self.path + query)

    def bulk(self, data: dict[str, object], csrf: bool = True) -> httpx2.Response:
        if csrf:
            data = {"csrf": self.dash.csrf(self.path), **data}
        return self.dash.client.post(self.path + "/bulk", data=data)


@pytest.fixture
def inbox(make_service: ServiceFactory) -> Inbox:
    dash = Dashboard(make_service())
    dash.set_password(dash.link("owner@example.com"))
    return Inbox(dash)


def _other_workspace(inbox: Inbox) -> tuple[str, str]:
    """A form of another workspace and one of its submissions."""
    svc = inbox.svc
    workspace = svc.workspace(name="Other")
    form = svc.form(workspace.workspace_id, name="Theirs")
    key = svc.run(
        svc.services.keys.create, workspace.workspace_id, scopes=frozenset({Scope.SUBMIT})
    )
    return form.form_id, inbox.submit(form.form_id, key.secret, message="theirs")


def test_home_links_each_form_to_its_inbox(inbox: Inbox) -> None:
    assert f'href="{inbox.path}"' in inbox.dash.client.get("/dashboard").text


def _month_cells(html: str, form_path: str) -> dict[str, str]:
    """The home page's count in each status column of a form's row."""
    row = html.split(f'<a href="{form_path}">', 1)[1].split("</tr>", 1)[0]
    found = re.findall(r'\?status=(\w+)&amp;since=([\d-]+)">(\d+)</a>', row)
    return {status: count for status, _, count in found} | {"since": found[0][1]}


def test_home_counts_this_months_submissions_by_status(inbox: Inbox) -> None:
    for n in range(3):
        inbox.submit(message=f"m{n}")
    junk = inbox.spam(message="buy now")
    _other_workspace(inbox)  # another workspace's: never counted here

    cells = _month_cells(inbox.dash.client.get("/dashboard").text, inbox.path)

    month = inbox.svc.clock.now().date().replace(day=1).isoformat()
    assert cells == {"accepted": "3", "spam": "1", "unverified": "0", "since": month}
    # Released, it moves to the accepted column.
    assert inbox.bulk({"action": "release", "id": [junk]}).status_code == 303
    cells = _month_cells(inbox.dash.client.get("/dashboard").text, inbox.path)
    assert (cells["accepted"], cells["spam"]) == ("4", "0")


def test_the_forms_list_pages_through_a_workspaces_forms(
    inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(home, "FORMS_PER_PAGE", 2)
    workspace_id = inbox.dash.workspace.workspace_id
    made = [inbox.svc.form(workspace_id, name=f"Extra {n}").form_id for n in range(2)]
    client = inbox.dash.client

    first = client.get("/dashboard")
    more = re.findall(r'href="(/dashboard\?workspace=[^"]+)">More forms', first.text)
    assert len(more) == 1
    second = client.get(more[0].replace("&amp;", "&"))
    listed = [set(FORM_LINK.findall(page.text)) for page in (first, second)]

    assert second.status_code == 200
    assert listed[0].isdisjoint(listed[1])
    assert listed[0] | listed[1] == {inbox.form_id, *made}
    assert "More forms" not in second.text
    assert 'href="/dashboard">All workspaces' in second.text
    # Another workspace's id, or a cursor this list did not give, is refused.
    assert client.get("/dashboard?workspace=ws_unknown").status_code == 404
    refused = client.get(f"/dashboard?workspace={workspace_id}&cursor=nonsense")
    assert refused.status_code == 422
    assert set(FORM_LINK.findall(refused.text)) == listed[0]


def test_tabs_search_and_dates_filter_the_rows(inbox: Inbox) -> None:
    first = inbox.submit(message="hello apple")
    second = inbox.submit(message="hello pear")
    junk = inbox.spam(message="buy now")

    accepted = inbox.get()
    spam = inbox.get("?status=spam")
    searched = inbox.get("?q=APPLE")
    today = inbox.svc.clock.now().date().isoformat()
    dated = inbox.get(f"?since={today}&until={today}")
    later = inbox.get("?since=2999-01-01")

    assert accepted.status_code == spam.status_code == 200
    assert set(ID.findall(accepted.text)) == {first, second}
    assert f"/dashboard/submissions/{first}" in accepted.text
    assert ID.findall(spam.text) == [junk]
    assert ID.findall(searched.text) == [first]
    assert set(ID.findall(dated.text)) == {first, second}
    assert ID.findall(later.text) == []
    assert "No submissions here." in later.text
    # The filter is kept in the tabs' and the export's links.
    assert "q=APPLE" in searched.text.split("<h1>", 1)[1].split("<form", 1)[0]


def test_pages_follow_the_cursor_and_link_back_to_the_first(inbox: Inbox) -> None:
    # Newest first is highest id first (ids made within one millisecond sort at random).
    made = sorted((inbox.submit(message=f"m{n}") for n in range(26)), reverse=True)

    first = inbox.get("?per_page=25")
    found = re.search(r'href="([^"]*cursor=[^"]+)">Next page', first.text)
    assert found is not None
    second = inbox.dash.client.get(found.group(1).replace("&amp;", "&"))

    assert ID.findall(first.text) == made[:25]
    assert ID.findall(second.text) == [made[25]]
    assert "First page" in second.text
    assert "Next page" not in second.text
    assert len(ID.findall(inbox.get("?per_page=50").text)) == 26


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?since=yesterday", "From: give a date"),
        ("?until=2026-01-01T10:00:00", "To: give the time"),
        ("?cursor=not-a-cursor", "This page link is not valid"),
        ("?before=not-a-cursor", "This page link is not valid"),
        ("?status=everything", "Status: must be one of"),
        ("?per_page=7", "Per page: must be 25 or 50"),
        ("?q=" + "x" * 201, "Search:"),
        ("/export?format=xml", "Export: the format must be csv or jsonl"),
        ("/export?format=csv&since=soon", "From: give a date"),
    ],
)
def test_a_bad_query_value_shows_the_page_with_a_message(
    inbox: Inbox, query: str, message: str
) -> None:
    inbox.submit(message="hello")
    answer = inbox.get(query)
    assert answer.status_code == 422
    assert message in answer.text
    assert "<h1>" in answer.text
    assert "Traceback" not in answer.text


def test_export_gives_the_current_filter_as_csv_and_jsonl(inbox: Inbox) -> None:
    kept = inbox.submit(message="apple pie")
    inbox.submit(message="pear")
    inbox.spam(message="apple spam")

    csv = inbox.get("/export?format=csv&q=apple")
    jsonl = inbox.get("/export?format=jsonl&q=apple")

    assert csv.status_code == jsonl.status_code == 200
    assert csv.headers["content-type"].startswith("text/csv")
    assert "apple pie" in csv.text
    assert "pear" not in csv.text
    assert "spam" not in csv.text
    lines = [json.loads(line) for line in jsonl.text.splitlines()]
    assert [line["submission_id"] for line in lines] == [kept]
    assert jsonl.headers["content-disposition"].endswith('.jsonl"')


def test_bulk_release_and_spam_change_the_selected(inbox: Inbox) -> None:
    one, two = inbox.spam(message="a"), inbox.spam(message="b")
    left = inbox.submit(message="c")

    page = inbox.get("?status=spam&q=b")
    assert 'name="q" value="b"' in page.text.split('action="' + inbox.path + '/bulk"')[1]
    released = inbox.bulk({"action": "release", "id": [one, two], "status": "spam", "q": "b"})
    assert released.status_code == 303  # back to the same filter
    assert released.headers["location"] == f"{inbox.path}?status=spam&q=b&told=1"
    assert inbox.status(one) == inbox.status(two) == SubmissionStatus.ACCEPTED
    # The page it leads to says what was done, once.
    said = '<p class="notice" role="status">2 submissions released (accepted).</p>'
    assert said in inbox.dash.client.get(released.headers["location"]).text
    assert said not in inbox.dash.client.get(released.headers["location"]).text

    marked = inbox.bulk({"action": "spam", "id": [one]})
    assert marked.status_code == 303
    assert "1 submission marked as spam." in inbox.dash.client.get(marked.headers["location"]).text
    assert inbox.status(one) == SubmissionStatus.SPAM
    assert inbox.status(left) == SubmissionStatus.ACCEPTED


def test_bulk_delete_asks_for_confirmation_first(inbox: Inbox) -> None:
    one, two = inbox.submit(message="a"), inbox.submit(message="b")

    asked = inbox.bulk({"action": "delete", "id": [one, two]})
    assert asked.status_code == 200
    assert "Delete 2 submissions?" in asked.text
    assert inbox.status(one) is not None

    done = inbox.bulk({"action": "delete", "id": [one, two], "confirm": "yes"})
    assert done.status_code == 303
    assert "2 submissions deleted." in inbox.dash.client.get(done.headers["location"]).text
    assert inbox.status(one) is None
    assert inbox.status(two) is None


def test_bulk_refusals_change_nothing(inbox: Inbox) -> None:
    mine = inbox.submit(message="mine")
    other_form, theirs = _other_workspace(inbox)

    no_csrf = inbox.bulk({"action": "delete", "id": [mine], "confirm": "yes"}, csrf=False)
    bad_csrf = inbox.bulk({"csrf": "x" * 40, "action": "spam", "id": [mine]}, csrf=False)
    foreign = inbox.bulk({"action": "delete", "id": [mine, theirs], "confirm": "yes"})
    no_action = inbox.bulk({"action": "burn", "id": [mine]})
    nothing = inbox.bulk({"action": "spam"})
    too_many = inbox.bulk({"action": "spam", "id": [mine] + [f"sub_{n}" for n in range(50)]})

    assert no_csrf.status_code == bad_csrf.status_code == 403
    assert foreign.status_code == 404
    assert no_action.status_code == nothing.status_code == 422
    assert "Choose an action." in no_action.text
    assert "Select submissions first." in nothing.text
    assert too_many.status_code == 422
    assert "Select at most 50." in too_many.text
    assert inbox.status(mine) == SubmissionStatus.ACCEPTED
    assert inbox.status(theirs) == SubmissionStatus.ACCEPTED
    # Another workspace's form: not found, for reading, export and bulk alike.
    other = f"/dashboard/forms/{other_form}"
    client = inbox.dash.client
    assert client.get(other).status_code == 404
    assert client.get(other + "/export?format=csv").status_code == 404
    data = {"csrf": inbox.dash.csrf(inbox.path), "action": "spam", "id": theirs}
    assert client.post(other + "/bulk", data=data).status_code == 404
    assert inbox.status(theirs) == SubmissionStatus.ACCEPTED


def test_without_a_session_every_inbox_route_goes_to_sign_in(inbox: Inbox) -> None:
    inbox.dash.new_browser()
    client = inbox.dash.client
    page = inbox.get()
    export = inbox.get("/export?format=csv")
    bulk = client.post(inbox.path + "/bulk", data={"action": "spam"})

    assert page.status_code == export.status_code == bulk.status_code == 303
    # A page read leads back to itself once signed in; a post cannot be replayed.
    assert page.headers["location"] == f"/dashboard/sign-in?next={inbox.path}"
    assert export.headers["location"] == (
        f"/dashboard/sign-in?next={inbox.path}/export%3Fformat%3Dcsv"
    )
    assert bulk.headers["location"] == "/dashboard/sign-in"


def test_a_member_reads_and_triages(inbox: Inbox) -> None:
    junk = inbox.spam(message="x")
    inbox.dash.new_browser()
    inbox.dash.set_password(inbox.dash.link("member@example.com", Role.MEMBER))

    assert ID.findall(inbox.get("?status=spam").text) == [junk]
    assert inbox.bulk({"action": "release", "id": [junk]}).status_code == 303
    assert inbox.status(junk) == SubmissionStatus.ACCEPTED


def test_hostile_values_are_shown_escaped(inbox: Inbox) -> None:
    inbox.submit(
        **{
            "<i>name</i>": "<script>alert(1)</script>",
            "link": "javascript:alert(1)",
            "_subject": "<b>subject</b>",
        }
    )
    page = inbox.get("?q=" + "<script>")

    assert page.status_code == 200
    assert "<script>alert(1)</script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "<i>name</i>" not in page.text
    assert "&lt;i&gt;name&lt;/i&gt;" in page.text
    assert 'href="javascript' not in page.text
    assert "<b>subject</b>" not in page.text
    assert 'value="&lt;script&gt;"' in page.text  # the search box, escaped too
    assert 'style="' not in page.text
    # Its one script is the dashboard's own file, by address: no inline script.
    assert re.findall(r"<script[^>]*>", page.text) == [
        f'<script src="{static_url("dashboard.js")}" defer>'
    ]
