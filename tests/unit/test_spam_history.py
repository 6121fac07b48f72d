"""Reading an owner's history for `intake spam train`: intake's own CSV and JSON Lines
exports and a Formspree CSV export, each row the submission it was."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from intake.domain.model import Submission, SubmissionStatus
from intake.domain.spam import history
from intake.domain.spam.history import HistoryError, PastMessage, read_history
from intake.presentation.exports import (
    CSV_FIXED_COLUMNS,
    csv_header,
    csv_line,
    csv_record,
    jsonl_line,
)

SAMPLES = Path(__file__).parent / "exports"


def _read(name: str) -> list[PastMessage]:
    with (SAMPLES / name).open(encoding="utf-8", newline="") as lines:
        return list(read_history(lines))


def _text(content: str) -> list[PastMessage]:
    return list(read_history(io.StringIO(content, newline="")))


def test_intake_csv_rows_are_their_fields_subject_and_reply_to() -> None:
    messages = _read("intake.csv")

    assert messages == [
        PastMessage(
            {
                "name": "Winner",
                "email": "win@pills.example",
                "message": "Buy cheap viagra now at http://pills.example/buy",
            },
            "Cheap meds",
            "win@pills.example",
        ),
        # The export's defusing of a formula is taken off again.
        PastMessage({"message": '=HYPERLINK("http://casino.example")'}, None, None),
    ]  # the third row holds nothing: skipped


def test_intake_jsonl_lines_are_their_data_subject_and_reply_to() -> None:
    messages = _read("intake.jsonl")

    assert messages == [
        PastMessage(
            {
                "name": "Ada",
                "email": "ada@example.com",
                "message": "Could you send a quote for the kitchen?",
                "topics": ["kitchen", "bath"],
            },
            "Quote request",
            "ada@example.com",
        ),
        PastMessage({"message": "Is the shop open on Sunday?"}, None, None),
    ]


def test_formspree_csv_keeps_fields_and_controls_and_leaves_metadata_out() -> None:
    messages = _read("formspree.csv")

    assert messages == [
        PastMessage(
            {
                "email": "bob@example.org",
                "name": "Bob",
                "message": "Hello,\nI would like a table for four.",
            },
            "Booking",
            "bob@example.org",  # the email field, as the pipeline takes it
        ),
        PastMessage(
            {
                "email": "carol@example.net",
                "name": "Carol",
                "message": "Thanks for the lovely dinner",
            },
            None,
            "carol@example.net",
        ),
    ]


def test_what_intake_exports_reads_back_as_the_submission_it_was() -> None:
    submission = Submission(
        submission_id="sub_1",
        form_id="frm_1",
        workspace_id="ws_1",
        status=SubmissionStatus.SPAM,
        data={"message": "-5% today only", "=sum": "x", "tags": ["a", "b"]},
        created_at=datetime(2026, 10, 1, tzinfo=UTC),
        subject="@deal",
        reply_to="s@spam.example",
    )
    fields = list(submission.data)
    csv_text = csv_line(csv_header(fields, files=True)) + csv_line(
        csv_record(submission, fields, files=True)
    )

    from_csv = _text(csv_text)
    from_jsonl = _text(jsonl_line(submission) + "\n")

    assert from_csv == [
        PastMessage(
            {"message": "-5% today only", "=sum": "x", "tags": "a, b"}, "@deal", "s@spam.example"
        )
    ]
    assert from_jsonl == [PastMessage(submission.data, "@deal", "s@spam.example")]


def test_the_intake_columns_are_the_exports() -> None:
    assert history.INTAKE_CSV_COLUMNS == CSV_FIXED_COLUMNS


@pytest.mark.parametrize(
    "name",
    [
        "Date",
        "created_at",
        "Submitted At",
        "submittedAt",
        "IP",
        "User Agent",
        "_gotcha",
        "_next",
        "cf-turnstile-response",
        "_date",
        "",
        "ID",
    ],
)
def test_metadata_and_control_columns_are_no_field(name: str) -> None:
    assert _text(f"message,{name}\r\nhello,x\r\n") == [
        PastMessage({"message": "hello"}, None, None)
    ]


def test_a_json_object_without_data_is_read_as_flat_fields() -> None:
    line = '{"_subject": "Hi", "message": "hello", "_replyto": "a@b.example", "date": "x"}\n'

    assert _text(line) == [PastMessage({"message": "hello"}, "Hi", "a@b.example")]


def test_an_empty_file_holds_no_message() -> None:
    assert _text("") == []
    assert _text("\n\n") == []
    assert _text("message,email\r\n") == []


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"data": {"a": "b"}}\nnot json\n', "line 2 is not JSON"),
        ('{"data": {"a": "b"}}\n[1, 2]\n', "line 2 is not a JSON object"),
        ('message\r\n"unterminated\r\n', "not CSV"),
        # More digits than Python turns into an int: json refuses it with a ValueError.
        ('{"data": {"a": ' + "9" * 5000 + "}}\n", "line 1 is not JSON"),
    ],
)
def test_a_malformed_file_is_refused_saying_where(content: str, said: str) -> None:
    with pytest.raises(HistoryError, match=said):
        _text(content)


def test_more_messages_than_the_cap_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "MAX_MESSAGES", 2)

    assert len(_text("message\r\na\r\nb\r\n")) == 2
    with pytest.raises(HistoryError, match="more than 2 messages"):
        _text("message\r\na\r\nb\r\nc\r\n")


def test_a_huge_cell_is_refused_not_read() -> None:
    with pytest.raises(HistoryError, match="not CSV"):
        _text("message\r\n" + "x" * 200_000 + "\r\n")
