"""Submissions written out: CSV (defused for spreadsheets) and JSON lines, each line in
the one JSON shape of a submission."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable

from intake.domain.model import Submission
from intake.presentation.views import submission_view
from intake.service.admin import CsvRow

_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# Spreadsheets skip leading spaces and line breaks before they look for a formula.
_FORMULA_STARTS = ("=", "+", "-", "@")


def _csv_cell(value: object) -> str:
    """Text for a spreadsheet cell; a leading formula character is defused with `'`
    (OWASP's advice against CSV injection)."""
    if value is None:
        text = ""
    elif isinstance(value, str):
        text = value
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        text = ", ".join(str(v) for v in value)
    else:
        text = json.dumps(value, ensure_ascii=False)
    if text.startswith(_FORMULA_PREFIXES) or text.lstrip().startswith(_FORMULA_STARTS):
        return "'" + text
    return text


CSV_FIXED_COLUMNS = ("submission_id", "created_at", "status", "subject", "reply_to")
CSV_FILES_COLUMN = "files"
CSV_FILE_SEPARATOR = "; "


def csv_header(fields: Iterable[str], *, files: bool = False) -> list[str]:
    """The fixed columns, then the data fields in the order given; a sender chose those
    names, so they are defused like any cell. Then, with `files`, the files column."""
    header = [*CSV_FIXED_COLUMNS, *(_csv_cell(name) for name in fields)]
    return [*header, CSV_FILES_COLUMN] if files else header


def csv_record(row: Submission, fields: Iterable[str], *, files: bool = False) -> list[str]:
    """One submission's cells under `csv_header(fields, files=files)`, each defused for
    spreadsheets; the files cell holds the files' names."""
    record = [
        _csv_cell(row.submission_id),
        _csv_cell(row.created_at.isoformat()),
        _csv_cell(row.status.value),
        _csv_cell(row.subject),
        _csv_cell(row.reply_to),
    ] + [_csv_cell(row.data.get(name)) for name in fields]
    if files:
        record.append(_csv_cell(CSV_FILE_SEPARATOR.join(f.name for f in row.files)))
    return record


def csv_line(cells: Iterable[str]) -> str:
    """One CSV record with its CRLF terminator (RFC 4180)."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(cells)
    return out.getvalue()


def csv_text(row: CsvRow) -> str:
    """A row of `Exports.csv_rows` as its CSV line: the header, or a submission's
    record under it."""
    if row.submission is None:
        return csv_line(csv_header(row.fields, files=row.files))
    return csv_line(csv_record(row.submission, row.fields, files=row.files))


def jsonl_line(submission: Submission, files: list[dict[str, object]] | None = None) -> str:
    view = submission_view(submission, files)
    return json.dumps(view, ensure_ascii=False, separators=(",", ":"))
