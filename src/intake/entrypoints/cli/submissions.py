"""`intake submissions ...`: list a form's submissions, or export them as CSV or JSON Lines,
with their uploaded files if asked."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TextIO

from intake.admin_runtime import AdminRuntime
from intake.domain.listing import SearchTextError, SubmissionFilter, check_search
from intake.domain.model import Submission, SubmissionStatus
from intake.entrypoints.cli import triage
from intake.entrypoints.cli.files import FileExport, file_export, require_blob_store
from intake.entrypoints.cli.output import Output, table
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group, positive_int
from intake.entrypoints.cli.runner import CommandError, read_only
from intake.presentation.exports import csv_text, jsonl_line
from intake.presentation.views import submission_view
from intake.service.admin import Exports, Submissions, submission_filter

_STATUSES = [status.value for status in SubmissionStatus]
_DATA_WIDTH = 60  # characters of data shown per line in a human listing


def register(commands: Subparsers) -> None:
    group = add_group(commands, "submissions", help="read and triage a form's submissions")

    listing = add_command(
        group, "list", help="list a form's submissions, newest first", handler=read_only(_list)
    )
    listing.add_argument("--form", required=True, metavar="ID")
    _add_filters(listing)
    listing.add_argument("--limit", type=positive_int, metavar="N", help="only the N newest")

    export = add_command(
        group,
        "export",
        help="export a form's submissions; the data goes to stdout unless --output is given "
        "(--json, which goes with --output only, then prints a summary)",
        handler=read_only(_export),
    )
    export.add_argument("--form", required=True, metavar="ID")
    export.add_argument("--format", required=True, choices=["csv", "jsonl"])
    _add_filters(export)
    export.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")
    export.add_argument(
        "--files",
        metavar="DIR",
        help="also write each uploaded file to DIR/<submission_id>/<index>-<name>",
    )
    triage.register(group)


def _add_filters(command: argparse.ArgumentParser) -> None:
    """The filters of the management API's listing and export, the same service's."""
    command.add_argument(
        "--status",
        choices=_STATUSES,
        action="append",
        help="only this status; repeat for several (default: all)",
    )
    command.add_argument(
        "--since", type=_rfc3339, metavar="TIME", help="created at or after TIME (RFC 3339)"
    )
    command.add_argument(
        "--until", type=_rfc3339, metavar="TIME", help="created before TIME (RFC 3339)"
    )
    command.add_argument(
        "--q",
        type=_search,
        metavar="TEXT",
        help="only those with TEXT in a field's value, whatever its case",
    )


def _rfc3339(raw: str) -> datetime:
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"not a time with its offset (RFC 3339): {raw!r}")
    return moment


def _search(raw: str) -> str:
    try:
        return check_search(raw)
    except SearchTextError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _filter(args: argparse.Namespace) -> SubmissionFilter:
    return submission_filter(args.status or (), args.since, args.until, args.q)


async def _list(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    # Newest first, as the management API lists them; --limit N: the newest N.
    listed = runtime.services.exports.newest(args.form, _filter(args), args.limit)
    rows = [submission async for submission in listed]
    lines = table(
        ("SUBMISSION", "STATUS", "CREATED", "SUBJECT", "FILES", "DATA"),
        (
            (
                s.submission_id,
                s.status.value,
                s.created_at.isoformat(),
                s.subject,
                len(s.files),
                _brief(s),
            )
            for s in rows
        ),
    )
    out.result(
        {
            "submissions": [
                submission_view(s, runtime.services.submissions.files_view(s)) for s in rows
            ]
        },
        lines if rows else ["no submissions"],
    )


def _brief(submission: Submission) -> str:
    data = json.dumps(submission.data, ensure_ascii=False, separators=(",", ":"))
    return data if len(data) <= _DATA_WIDTH else data[: _DATA_WIDTH - 3] + "..."


async def _export(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    exports = runtime.services.exports
    if args.files is not None:
        require_blob_store(exports)  # a configuration error first, whatever the form
    if out.json_mode and args.output is None:
        # --json promises one JSON document on stdout, and there the export is the data.
        raise CommandError(
            "--json goes with --output FILE: it prints a summary of the export written "
            "there; without --output the export itself goes to stdout, as CSV or JSON Lines"
        )
    await runtime.services.forms.get(args.form)  # refuse an unknown form before creating any file
    files: FileExport | None = None
    with ExitStack() as stack:
        if args.files is not None:
            files = stack.enter_context(file_export(Path(args.files), exports, out))
        reading = runtime.services.submissions
        lines = _lines(
            exports, reading, form_id=args.form, fmt=args.format, chosen=_filter(args), files=files
        )
        if args.output is None:
            await _write(lines, out.stdout)
            out.stdout.flush()
        else:
            with _replacing(Path(args.output)) as destination:
                written = await _write(lines, destination)
    if files is not None:
        files.check()  # before any summary: with --json, the one document is the error
    if args.output is None:
        return
    count = written - 1 if args.format == "csv" else written  # less the CSV header
    document: dict[str, object] = {"output": args.output, "format": args.format, "count": count}
    summary = [f"exported {count} submissions to {args.output}"]
    if files is not None:
        document.update(files_dir=args.files, files=files.written)
        summary.append(f"wrote {files.written} files to {args.files}")
    out.result(document, summary)


def _lines(
    exports: Exports,
    reading: Submissions,
    *,
    form_id: str,
    fmt: str,
    chosen: SubmissionFilter,
    files: FileExport | None,
) -> AsyncIterator[str]:
    if fmt == "csv":
        return _csv(exports, form_id, chosen, files)
    return _jsonl(exports, reading, form_id=form_id, chosen=chosen, files=files)


async def _csv(
    exports: Exports, form_id: str, chosen: SubmissionFilter, files: FileExport | None
) -> AsyncIterator[str]:
    async for row in exports.csv_rows(form_id, chosen):
        if files is not None and row.submission is not None:
            # The row names the files; where they went follows from the names.
            await files.write(row.submission, [])
        yield csv_text(row)


async def _jsonl(
    exports: Exports,
    reading: Submissions,
    *,
    form_id: str,
    chosen: SubmissionFilter,
    files: FileExport | None,
) -> AsyncIterator[str]:
    async for submission in exports.submissions(form_id, chosen):
        entries = reading.files_view(submission)
        if files is not None:
            await files.write(submission, entries)
        yield jsonl_line(submission, entries) + "\n"


async def _write(lines: AsyncIterator[str], stream: TextIO) -> int:
    """Row by row, so an export of any size runs in constant memory."""
    count = 0
    async for line in lines:
        stream.write(line)
        count += 1
    return count


@contextmanager
def _replacing(path: Path) -> Iterator[TextIO]:
    """A file written beside `path` and renamed over it only when complete, so a failed
    export never leaves a truncated file. It is created readable by its owner only
    (mkstemp's 0600): an export holds personal data."""
    try:
        fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as error:
        raise CommandError(f"cannot write {str(path)!r}: {error.strerror}") from None
    try:
        # newline="": CSV's CRLF is written as it is.
        with open(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
        os.replace(partial, path)
    except BaseException as error:
        Path(partial).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise CommandError(f"cannot write {str(path)!r}: {error.strerror}") from None
        raise
