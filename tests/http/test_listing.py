"""GET /v1/forms/{form_id}/submissions and /export on every backend: pages newest first
that follow each other by cursor, the filters, every bad parameter named in a 422, and
exports in the CLI's columns, formula-defused, whose contents never reach the logs."""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path
from typing import Any

import httpx2
import pytest

from intake.domain.listing import encode_cursor
from intake.domain.model import Scope
from intake.domain.scoring import PHRASE_POINTS
from intake.service.admin import CreatedKey
from tests.http.conftest import (
    Seeded,
    Service,
    assert_error,
)

# Also on PostgreSQL (tests/http/conftest.py): search (PostgreSQL's own text search) and
# keyset pages.
pytestmark = pytest.mark.postgres_smoke

# Scores PHRASE_POINTS: spam on a form whose threshold is that.
SPAMMY = "Please click here to see our menu."


class Listing:
    """A workspace's form with submissions sent through the server route, and a read key."""

    def __init__(self, seeded: Seeded) -> None:
        self.svc: Service = seeded.svc
        self.workspace_id = seeded.workspace.workspace_id
        self.form_id = seeded.form.form_id
        self.reader = self.key(Scope.READ)
        self.submitter = self.key(Scope.SUBMIT)

    def key(self, *scopes: Scope) -> CreatedKey:
        created: CreatedKey = self.svc.run(
            self.svc.services.keys.create, self.workspace_id, scopes=frozenset(scopes)
        )
        return created

    def submit(self, data: dict[str, Any], form_id: str | None = None) -> str:
        answer = self.svc.server(form_id or self.form_id, self.submitter.secret, json=data)
        assert answer.status_code == 201, answer.text
        self.svc.clock.advance(1)  # distinct times, so that since/until can tell them apart
        submission_id: str = answer.json()["submission_id"]
        return submission_id

    def get(self, path: str, params: Any = None) -> httpx2.Response:
        return self.svc.client.get(
            f"/v1/forms/{self.form_id}/{path}",
            params=params,
            headers={"authorization": f"Bearer {self.reader.secret}"},
        )

    def page(self, **params: Any) -> dict[str, Any]:
        answer = self.get("submissions", params)
        assert answer.status_code == 200, answer.text
        document: dict[str, Any] = answer.json()
        assert set(document) == {"data", "next_cursor"}
        return document

    def ids(self, **params: Any) -> list[str]:
        return [item["submission_id"] for item in self.page(**params)["data"]]


@pytest.fixture
def listing(seeded: Seeded) -> Listing:
    return Listing(seeded)


def test_a_page_is_newest_first_in_the_one_view_of_a_submission(listing: Listing) -> None:
    sent = [
        listing.submit({"message": f"hello {n}", "email": f"u{n}@example.com"}) for n in range(3)
    ]

    document = listing.page()

    assert [item["submission_id"] for item in document["data"]] == sent[::-1]
    assert document["next_cursor"] is None
    newest = document["data"][0]
    keys = {"submission_id", "form_id", "status", "subject", "reply_to", "data", "files"}
    assert keys | {"created_at"} <= set(newest)
    assert newest["data"]["message"] == "hello 2"
    assert newest["form_id"] == listing.form_id
    assert newest["status"] == "accepted"


def test_cursors_walk_every_submission_once_while_others_arrive(listing: Listing) -> None:
    sent = [listing.submit({"n": str(n)}) for n in range(7)]
    first = listing.page(limit=3)
    assert [i["submission_id"] for i in first["data"]] == sent[:3:-1]
    newer = listing.submit({"n": "late"})  # newer than the cursor: not in the pages after it

    seen = [i["submission_id"] for i in first["data"]]
    cursor = first["next_cursor"]
    while cursor is not None:
        document = listing.page(limit=3, cursor=cursor)
        seen.extend(i["submission_id"] for i in document["data"])
        cursor = document["next_cursor"]

    assert seen == sent[::-1]
    assert listing.ids(limit=1) == [newer]


def test_status_repeats_and_since_until_bound_the_creation_time(listing: Listing) -> None:
    accepted = listing.submit({"m": "a"})
    listing.svc.update_form(listing.form_id, spam_threshold=PHRASE_POINTS)
    spam = [listing.submit({"m": f"{n}: {SPAMMY}"}) for n in range(2)]
    stored = [listing.svc.submission(i) for i in (accepted, *spam)]

    assert listing.ids(status="spam") == spam[::-1]
    assert listing.ids(status=["spam", "accepted"]) == [*spam[::-1], accepted]
    assert listing.ids(status="unverified") == []
    since = stored[1].created_at.isoformat()
    until = stored[2].created_at.isoformat().replace("+00:00", "Z")
    assert listing.ids(since=since) == spam[::-1]
    assert listing.ids(since=since, until=until) == [spam[0]]


def test_q_finds_values_whatever_their_case_and_never_names(listing: Listing) -> None:
    hit = listing.submit({"message": "Need a QUOTE for 50% off"})
    listing.submit({"quote": "a name is not a value"})
    listing.submit({"message": "nothing here"})

    assert listing.ids(q="quote") == [hit]
    assert listing.ids(q="50% o") == [hit]
    assert listing.ids(q="5_%") == []


BAD_PARAMETERS = [
    ({"limit": "0"}, "limit"),
    ({"limit": "201"}, "limit"),
    ({"limit": "abc"}, "limit"),
    ({"limit": "-1"}, "limit"),
    ({"status": "bogus"}, "status"),
    ({"status": ["spam", "Spam"]}, "status"),
    ({"cursor": "garbage"}, "cursor"),
    ({"cursor": "djE6c3ViX25vcGU"}, "cursor"),  # base64url of "v1:sub_nope"
    ({"cursor": "x" * 500}, "cursor"),
    ({"since": "not-a-time"}, "since"),
    ({"since": "2026-01-31"}, "since"),
    ({"until": "2026-01-31T12:00:00"}, "until"),  # no offset
    ({"q": "x" * 201}, "q"),
    ({"q": ""}, "q"),
    ({"q": "a\nb"}, "q"),
]


@pytest.mark.parametrize(("params", "name"), BAD_PARAMETERS)
def test_a_bad_parameter_is_named_in_a_422(listing: Listing, params: Any, name: str) -> None:
    listing.submit({"m": "x"})
    # The export takes the filters, not the paging.
    paths = ["submissions"] if name in ("limit", "cursor") else ["submissions", "export"]

    for path in paths:
        body = assert_error(listing.get(path, params), "validation_failed")
        assert set(body["error"]["fields"]) == {name}, (path, body)


def documented_refusal() -> tuple[str, dict[str, Any]]:
    """api.md's example of a refusal: the request its curl line makes, and the answer
    shown under it."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    after = text.split("A refusal, for instance a `limit` out of range:", 1)[1]
    curl = after.split("```sh", 1)[1].split("```", 1)[0]
    answer = after.split("```json", 1)[1].split("```", 1)[0]
    path = curl.split('"$INTAKE', 1)[1].split('"', 1)[0]
    return path, json.loads(answer)


def test_the_documented_limit_refusal_is_what_is_answered(listing: Listing) -> None:
    path, documented = documented_refusal()

    answer = listing.svc.client.get(
        path, headers={"authorization": f"Bearer {listing.reader.secret}"}
    )

    assert answer.status_code == 422
    body = answer.json()
    assert body["request_id"].startswith("req_")
    assert {**body, "request_id": "req_..."} == documented


def test_a_cursor_of_an_id_moves_on_from_it_in_any_form(listing: Listing) -> None:
    sent = [listing.submit({"n": str(n)}) for n in range(3)]

    assert listing.ids(cursor=encode_cursor(sent[2])) == sent[1::-1]


def test_the_csv_export_has_the_cli_columns_and_defuses_formulas(listing: Listing) -> None:
    hostile = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)", " =1+1"]
    for n, value in enumerate(hostile):
        listing.submit({"name": value, "email": f"u{n}@example.com"})

    answer = listing.get("export", {"format": "csv"})

    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "text/csv; charset=utf-8"
    disposition = answer.headers["content-disposition"]
    assert disposition == f'attachment; filename="submissions-{listing.form_id}.csv"'
    rows = list(csv.reader(io.StringIO(answer.text)))
    assert rows[0] == [
        "submission_id",
        "created_at",
        "status",
        "subject",
        "reply_to",
        "name",
        "email",
    ]
    names = [row[5] for row in rows[1:]]
    assert names == ["'" + value for value in hostile]  # oldest first, as the CLI's export
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)


def test_the_export_takes_the_listing_filters(listing: Listing) -> None:
    listing.submit({"m": "keep me"})
    listing.submit({"m": "drop me"})
    listing.svc.update_form(listing.form_id, spam_threshold=PHRASE_POINTS)
    spam = listing.submit({"m": f"keep me too: {SPAMMY}"})

    answer = listing.get("export", {"format": "jsonl", "q": "KEEP", "status": "spam"})

    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert [line["submission_id"] for line in lines] == [spam]
    assert lines[0]["data"] == {"m": f"keep me too: {SPAMMY}"}


def test_export_format_must_be_one_of_csv_or_jsonl(listing: Listing) -> None:
    for params in ({"format": "xml"}, {"format": ["csv", "jsonl"]}):
        body = assert_error(listing.get("export", params), "validation_failed")
        assert set(body["error"]["fields"]) == {"format"}


def test_submission_contents_never_reach_the_logs(
    listing: Listing, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "s3cret-contents-7d1f"
    listing.submit({"message": secret})

    with caplog.at_level(logging.DEBUG):
        assert listing.get("export", {"format": "csv"}).status_code == 200
        assert listing.get("export", {"format": "jsonl"}).status_code == 200
        assert listing.get("submissions", {"q": secret}).status_code == 200

    ours = [record for record in caplog.records if record.name.startswith("intake")]
    assert ours  # the access log saw the requests
    assert all(secret not in str(vars(record)) for record in ours)
