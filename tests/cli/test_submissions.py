from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from attrs import frozen
from starlette.testclient import TestClient

from intake.domain.scoring import score
from tests.cli.conftest import OUTAGE_TOKEN, PASSING_TOKEN, Cli, submit

SPAMMY = "Buy now! Click here for casino viagra, limited time offer"


@frozen
class Made:
    form_id: str
    accepted: str
    spam: str
    unverified: str


@pytest.fixture
def made(cli: Cli, http: TestClient) -> Made:
    """One form with a submission of every status, made through the public endpoint."""
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    form = cli.json(
        "form", "create", "--workspace", workspace_id, "--challenge", "turnstile",
        "--challenge-secret", "s", "--spam-threshold", "2",
    )  # fmt: skip
    key = form["public_form_key"]
    accepted = submit(
        http, key, {"email": "a@example.com", "message": "Hello", "_subject": "Hi"},
        token=PASSING_TOKEN,
    )  # fmt: skip
    spam = submit(http, key, {"message": SPAMMY}, token=PASSING_TOKEN)
    unverified = submit(http, key, {"name": "Unverified"}, token=OUTAGE_TOKEN)
    return Made(form["form_id"], accepted, spam, unverified)


def test_submissions_list_shows_every_status_by_default(cli: Cli, made: Made) -> None:
    listed = cli.json("submissions", "list", "--form", made.form_id)["submissions"]

    # Newest first, as the management API lists them.
    assert [s["submission_id"] for s in listed] == [made.unverified, made.spam, made.accepted]
    assert [s["status"] for s in listed] == ["unverified", "spam", "accepted"]
    first = listed[-1]
    assert first["subject"] == "Hi"
    assert first["data"] == {"email": "a@example.com", "message": "Hello"}
    assert first["created_at"]


def test_submissions_list_shows_the_score_and_its_reasons(cli: Cli, made: Made) -> None:
    listed = cli.json("submissions", "list", "--form", made.form_id)["submissions"]

    reasons = {s["status"]: (s["spam_score"], s["spam_reasons"]) for s in listed}
    expected = score({"message": SPAMMY})
    assert reasons["spam"] == (expected.points, list(expected.reasons))
    assert reasons["spam"][1]  # the phrases, at least
    assert reasons["accepted"] == (0.0, [])


@pytest.mark.parametrize("status", ["accepted", "spam", "unverified"])
def test_submissions_list_filters_by_status(cli: Cli, made: Made, status: str) -> None:
    listed = cli.json("submissions", "list", "--form", made.form_id, "--status", status)

    (only,) = listed["submissions"]
    assert only["status"] == status
    assert only["submission_id"] == getattr(made, status)


def test_submissions_list_limit_keeps_the_most_recent(cli: Cli, made: Made) -> None:
    listed = cli.json("submissions", "list", "--form", made.form_id, "--limit", "2")

    assert [s["submission_id"] for s in listed["submissions"]] == [made.unverified, made.spam]


def test_submissions_list_agrees_with_the_api_listing(
    cli: Cli, made: Made, http: TestClient
) -> None:
    workspace_id = cli.json("form", "show", made.form_id)["workspace_id"]
    key = cli.json("key", "create", "--workspace", workspace_id, "--scope", "read")["api_key"]
    path = f"/v1/forms/{made.form_id}/submissions"
    headers = {"Authorization": f"Bearer {key}"}

    for limit in ("1", "2", "3"):
        api = http.get(path, params={"limit": limit}, headers=headers)
        listed = cli.json("submissions", "list", "--form", made.form_id, "--limit", limit)

        assert api.status_code == 200, api.text
        api_ids = [s["submission_id"] for s in api.json()["data"]]
        assert [s["submission_id"] for s in listed["submissions"]] == api_ids


def test_submissions_list_without_json_is_a_table(cli: Cli, made: Made) -> None:
    lines = cli("submissions", "list", "--form", made.form_id).out.splitlines()

    assert lines[0].split() == ["SUBMISSION", "STATUS", "CREATED", "SUBJECT", "FILES", "DATA"]
    assert len(lines) == 4
    assert made.unverified in lines[1]  # the newest first
    assert "unverified" in lines[1]
    assert made.accepted in lines[3]


def test_submissions_list_of_a_form_without_any(cli: Cli) -> None:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    form_id = cli.json("form", "create", "--workspace", workspace_id)["form_id"]

    assert cli.json("submissions", "list", "--form", form_id) == {"submissions": []}
    assert cli("submissions", "list", "--form", form_id).out == "no submissions\n"


def test_submissions_commands_refuse_unknown_forms_and_bad_flags(cli: Cli) -> None:
    result = cli("submissions", "list", "--form", "frm_nope", "--json")
    assert result.code == 1
    assert result.document == {"ok": False, "error": "no form 'frm_nope'"}
    assert cli("submissions", "list", "--form", "frm_nope", "--status", "deleted").code == 2
    assert cli("submissions", "list", "--form", "frm_nope", "--limit", "0").code == 2
    assert cli("submissions", "list").code == 2
    assert cli("submissions", "export", "--form", "frm_nope").code == 2  # --format missing
    assert cli("submissions", "export", "--form", "frm_nope", "--format", "xml").code == 2
    assert cli("submissions", "export", "--form", "frm_nope", "--format", "csv").code == 1


def _csv_rows(text: str) -> list[list[str]]:
    assert text.endswith("\r\n")
    return list(csv.reader(io.StringIO(text, newline="")))


def test_export_csv_to_stdout_has_fixed_then_data_columns(cli: Cli, made: Made) -> None:
    result = cli("submissions", "export", "--form", made.form_id, "--format", "csv")

    assert result.code == 0, result.err
    header, *rows = _csv_rows(result.out)
    assert header == [
        "submission_id", "created_at", "status", "subject", "reply_to",
        "email", "message", "name",
    ]  # fmt: skip
    assert [row[0] for row in rows] == [made.accepted, made.spam, made.unverified]
    assert rows[0][2:] == ["accepted", "Hi", "a@example.com", "a@example.com", "Hello", ""]
    assert rows[2][-1] == "Unverified"


def test_export_csv_filters_by_status(cli: Cli, made: Made) -> None:
    result = cli(
        "submissions", "export", "--form", made.form_id, "--format", "csv", "--status", "spam"
    )

    header, *rows = _csv_rows(result.out)
    assert header[5:] == ["message"]  # only the fields of the rows exported
    assert [row[0] for row in rows] == [made.spam]


def test_export_csv_defuses_spreadsheet_formulas(cli: Cli, http: TestClient) -> None:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    form = cli.json("form", "create", "--workspace", workspace_id)
    formula = '=HYPERLINK("https://evil.example","click")'
    submit(http, form["public_form_key"], {"name": formula, "sum": "+1+2", "at": "@cmd"})

    result = cli("submissions", "export", "--form", form["form_id"], "--format", "csv")

    header, row = _csv_rows(result.out)
    cells = dict(zip(header, row, strict=True))
    assert cells["name"] == "'" + formula
    assert cells["sum"] == "'+1+2"
    assert cells["at"] == "'@cmd"


def test_export_jsonl_writes_one_submission_per_line(cli: Cli, made: Made) -> None:
    result = cli("submissions", "export", "--form", made.form_id, "--format", "jsonl")

    assert result.code == 0, result.err
    rows = [json.loads(line) for line in result.out.splitlines()]
    assert [r["submission_id"] for r in rows] == [made.accepted, made.spam, made.unverified]
    assert rows[0]["data"] == {"email": "a@example.com", "message": "Hello"}
    assert rows[0]["status"] == "accepted"

    unverified = cli(
        "submissions", "export", "--form", made.form_id, "--format", "jsonl",
        "--status", "unverified",
    )  # fmt: skip
    assert [json.loads(line)["submission_id"] for line in unverified.out.splitlines()] == [
        made.unverified
    ]


@pytest.mark.parametrize(("fmt", "lines"), [("csv", 4), ("jsonl", 3)])
def test_export_to_a_file_prints_a_summary(
    cli: Cli, made: Made, tmp_path: Path, fmt: str, lines: int
) -> None:
    target = tmp_path / f"export.{fmt}"

    doc = cli.json(
        "submissions", "export", "--form", made.form_id, "--format", fmt, "--output", str(target)
    )

    assert doc == {"output": str(target), "format": fmt, "count": 3}
    assert len(target.read_bytes().splitlines()) == lines
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no leftovers
    human = cli(
        "submissions", "export", "--form", made.form_id, "--format", fmt, "--output", str(target)
    )
    assert human.out == f"exported 3 submissions to {target}\n"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_json_without_output_is_refused_rather_than_printing_the_data(
    cli: Cli, made: Made, fmt: str
) -> None:
    # --json promises one JSON document on stdout; to stdout an export is its data.
    result = cli("submissions", "export", "--form", made.form_id, "--format", fmt, "--json")

    assert result.code == 1
    assert json.loads(result.out) == result.document  # the one document: the error
    assert result.document["ok"] is False
    assert "--json goes with --output" in result.document["error"]
    assert made.accepted not in result.out


def test_export_of_an_unknown_form_creates_no_file(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "export.csv"

    result = cli(
        "submissions", "export", "--form", "frm_nope", "--format", "csv", "--output", str(target)
    )

    assert result.code == 1
    assert not target.exists()


def test_export_into_a_missing_directory_is_refused(cli: Cli, made: Made, tmp_path: Path) -> None:
    target = tmp_path / "missing" / "export.csv"

    result = cli(
        "submissions", "export", "--form", made.form_id, "--format", "csv", "--output", str(target),
        "--json",
    )  # fmt: skip

    assert result.code == 1
    assert "cannot write" in result.document["error"]


def test_submissions_list_and_export_take_the_api_filters(cli: Cli, made: Made) -> None:
    base = ("--form", made.form_id)
    listed = cli.json("submissions", "list", *base, "--status", "spam", "--status", "unverified")
    assert [s["submission_id"] for s in listed["submissions"]] == [made.unverified, made.spam]

    found = cli.json("submissions", "list", *base, "--q", "CASINO")["submissions"]
    assert [s["submission_id"] for s in found] == [made.spam]
    future = cli.json("submissions", "list", *base, "--since", "2999-01-01T00:00:00Z")
    assert future["submissions"] == []
    past = cli.json("submissions", "list", *base, "--until", "2000-01-01T00:00:00+02:00")
    assert past["submissions"] == []

    exported = cli("submissions", "export", *base, "--format", "jsonl", "--q", "hello")
    assert exported.code == 0, exported.err
    assert [json.loads(line)["submission_id"] for line in exported.out.splitlines()] == [
        made.accepted
    ]


@pytest.mark.parametrize(
    "wrong",
    [["--since", "yesterday"], ["--until", "2026-01-01T00:00:00"], ["--q", ""], ["--q", "x" * 201]],
)
def test_a_wrong_filter_is_a_usage_error(cli: Cli, wrong: list[str]) -> None:
    result = cli("submissions", "list", "--form", "frm_nope", *wrong)

    assert result.code == 2
    assert wrong[0] in result.err
