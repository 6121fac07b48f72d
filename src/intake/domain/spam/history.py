"""An owner's history brought from another export, for `intake spam train`: each row of
intake's own CSV or JSON Lines export, or of a Formspree CSV export, read as the
submission it was (its data, subject and reply-to), so that it teaches the tokens the
same submission made here would (docs/scoring.md, "Bringing your history").

Pure: it reads lines (an open file is one) and raises HistoryError on what it cannot
read. Bounded: at most MAX_MESSAGES messages per file, each cell as large as the csv
module allows (its field size limit); the command bounds the file's size.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Sequence

from attrs import frozen

from intake.domain.controls import CHALLENGE_TOKEN_FIELDS, REPLY_TO, SUBJECT
from intake.domain.model import FieldData, FieldValue
from intake.domain.validation import reply_address

MAX_MESSAGES = 50_000
# intake's CSV export: these columns, then one per field, then `files` when asked for
# (presentation/exports.py, CSV_FIXED_COLUMNS; a test holds the two alike).
INTAKE_CSV_COLUMNS = ("submission_id", "created_at", "status", "subject", "reply_to")
_INTAKE_FILES_COLUMN = "files"
# A Formspree (or any other) CSV export: a column is a field unless its name says it is
# what the service recorded about the submission. Compared lowercased, letters and
# digits only: "Submitted At", "submitted_at" and "submittedAt" alike.
_METADATA = frozenset(
    {
        "id",
        "submissionid",
        "formid",
        "form",
        "date",
        "time",
        "datetime",
        "timestamp",
        "created",
        "createdat",
        "submitted",
        "submittedat",
        "receivedat",
        "updatedat",
        "ip",
        "ipaddress",
        "useragent",
        "referrer",
        "referer",
        "status",
        "spam",
        "isspam",
        "spamscore",
        "read",
        "archived",
    }
)
_ALIASES = {REPLY_TO: REPLY_TO, "_reply_to": REPLY_TO, SUBJECT: SUBJECT}
_CHALLENGES = frozenset(CHALLENGE_TOKEN_FIELDS)
# What intake's CSV export put before a cell (or a field's name) that a spreadsheet
# would read as a formula: taken off again.
_DEFUSED = re.compile(r"'(?=\s*[=+\-@]|[\t\r])")


class HistoryError(ValueError):
    """A file that cannot be read as an export; the message says where and why."""


@frozen
class PastMessage:
    """One submission of an export: what its tokens are made of."""

    data: FieldData
    subject: str | None
    reply_to: str | None


def read_history(lines: Iterable[str]) -> Iterator[PastMessage]:
    """The messages of one export, in its order: JSON Lines when its first line that is
    not blank is an object, CSV otherwise (intake's columns, or any other service's).
    A row with no value at all is skipped. Raises HistoryError on a malformed line or
    row, or past MAX_MESSAGES messages."""
    rest = iter(lines)
    first = next((line for line in rest if line.strip()), None)
    if first is None:
        return
    chained = itertools.chain([first], rest)
    messages = _jsonl(chained) if first.lstrip("\ufeff \t").startswith("{") else _csv(chained)
    for count, message in enumerate(messages, start=1):
        if count > MAX_MESSAGES:
            raise HistoryError(f"more than {MAX_MESSAGES:,} messages: split the file")
        yield message


def _jsonl(lines: Iterable[str]) -> Iterator[PastMessage]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            # ValueError: JSONDecodeError, and a number of more digits than an int takes.
            raise HistoryError(f"line {number} is not JSON") from None
        if not isinstance(row, dict):
            raise HistoryError(f"line {number} is not a JSON object")
        message = _intake_object(row) if isinstance(row.get("data"), dict) else _flat(row)
        if message is not None:
            yield message


def _intake_object(row: dict[str, FieldValue]) -> PastMessage | None:
    """A line of intake's JSON Lines export: submission_view's shape."""
    data = row["data"]
    assert isinstance(data, dict)
    fields = {name: value for name, value in data.items() if _present(value)}
    return _message(fields, _text(row.get("subject")), _text(row.get("reply_to")))


def _csv(lines: Iterable[str]) -> Iterator[PastMessage]:
    # Strict: a file that is not well-formed CSV is refused, not read askew.
    reader = csv.reader(lines, strict=True)
    try:
        header = [_undefused(name) for name in next(reader)]
        intake = tuple(header[: len(INTAKE_CSV_COLUMNS)]) == INTAKE_CSV_COLUMNS
        read = _intake_row if intake else _flat_row
        for row in reader:
            message = read(header, row)
            if message is not None:
                yield message
    except csv.Error as error:
        raise HistoryError(f"line {reader.line_num}: not CSV ({error})") from None


def _intake_row(header: Sequence[str], row: Sequence[str]) -> PastMessage | None:
    cells = dict(zip(header, (_undefused(cell) for cell in row), strict=False))
    names = header[len(INTAKE_CSV_COLUMNS) :]
    if names and names[-1] == _INTAKE_FILES_COLUMN:
        names = names[:-1]  # the files' names: nothing the sender wrote
    fields: FieldData = {name: cells[name] for name in names if cells.get(name)}
    return _message(fields, cells.get("subject") or None, cells.get("reply_to") or None)


def _flat_row(header: Sequence[str], row: Sequence[str]) -> PastMessage | None:
    return _flat(dict(zip(header, row, strict=False)))


def _flat(row: dict[str, FieldValue]) -> PastMessage | None:
    """A row of another service's export: its fields, `_subject` and `_replyto`; the
    columns that are metadata, and the other controls, are left out."""
    fields: FieldData = {}
    controls: dict[str, str | None] = {}
    for name, value in row.items():
        control = _ALIASES.get(name.strip().lower())
        if control is not None:
            controls[control] = _text(value)
        elif _is_field(name) and _present(value):
            fields[name.strip()] = value
    return _message(fields, controls.get(SUBJECT), controls.get(REPLY_TO))


def _is_field(name: str) -> bool:
    stripped = name.strip()
    if not stripped or stripped.startswith("_") or stripped in _CHALLENGES:
        return False
    return re.sub(r"[^a-z0-9]", "", stripped.lower()) not in _METADATA


def _message(fields: FieldData, subject: str | None, reply_to: str | None) -> PastMessage | None:
    if not fields and not subject:
        return None
    return PastMessage(fields, subject, reply_address(fields, reply_to))


def _present(value: FieldValue) -> bool:
    return value not in (None, "", [], {})


def _text(value: FieldValue) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    return None


def _undefused(cell: str) -> str:
    return cell[1:] if _DEFUSED.match(cell) else cell
