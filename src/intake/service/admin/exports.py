"""Submissions as files: CSV (defused for spreadsheets) and JSON lines."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable

from intake.domain.model import Submission
from intake.service.admin.views import submission_view

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


def csv_export(rows: list[Submission], *, files: bool = False) -> str:
    """One row per submission: fixed columns, then every data field seen, in first-seen
    order, then the files column when `files` or a row has files."""
    fields: dict[str, None] = {}
    for row in rows:
        for name in row.data:
            fields.setdefault(name, None)
    files = files or any(row.files for row in rows)
    lines = [csv_line(csv_header(fields, files=files))]
    lines.extend(csv_line(csv_record(row, fields, files=files)) for row in rows)
    return "".join(lines)


def jsonl_line(submission: Submission, files: list[dict[str, object]] | None = None) -> str:
    view = submission_view(submission, files)
    return json.dumps(view, ensure_ascii=False, separators=(",", ":"))
