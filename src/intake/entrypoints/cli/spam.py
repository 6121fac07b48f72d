"""`intake spam train|stats`: bringing an owner's history to a workspace's spam filter,
and what the filter knows (docs/scoring.md, "Teaching the filter")."""

from __future__ import annotations

import argparse
import io
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from attrs import frozen

from intake.admin_runtime import AdminRuntime
from intake.domain.spam.history import HistoryError, read_history
from intake.domain.spam.model import Label
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group
from intake.entrypoints.cli.runner import CommandError, read_only, with_runtime
from intake.presentation.spam import spam_summary_lines, spam_summary_view

# An export this large holds far more than a filter needs; a larger one is refused before
# it is read, rather than read for minutes.
MAX_FILE_BYTES = 32 * 1024 * 1024


def register(commands: Subparsers) -> None:
    group = add_group(
        commands, "spam", help="teach a workspace's spam filter, and see what it knows"
    )
    train = add_command(
        group,
        "train",
        help="teach the filter an owner's history: intake's CSV or JSON Lines exports, or a "
        "Formspree CSV export, each file all spam or all real messages",
        handler=with_runtime(_train),
    )
    train.add_argument("--workspace", required=True, metavar="ID")
    train.add_argument("--spam", type=Path, metavar="FILE", help="an export of spam only")
    train.add_argument("--ham", type=Path, metavar="FILE", help="an export of real messages only")
    stats = add_command(
        group,
        "stats",
        help="what the workspace's filter knows, and the instance's layer",
        handler=read_only(_stats),
    )
    stats.add_argument("--workspace", required=True, metavar="ID")


async def _train(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    paths = {
        label: path for label, path in ((Label.SPAM, args.spam), (Label.HAM, args.ham)) if path
    }
    if not paths:
        raise CommandError("nothing to teach: give --spam FILE, --ham FILE or both")
    services = runtime.services
    await services.workspaces.get(args.workspace)  # an unknown workspace before any file is read
    # Every file read through once before anything is taught: a file refused halfway
    # teaches nothing.
    files = {label: _export(path) for label, path in paths.items()}
    for export in files.values():
        _check(export)
    taught = {label.value: 0 for label in Label}
    for label, export in files.items():
        with _opened(export) as lines:
            taught[label.value] = await services.spam.train(
                args.workspace, label, read_history(lines)
            )
    summary = await services.spam.summary(args.workspace)
    document = {**spam_summary_view(args.workspace, summary), "taught": taught}
    said = f"taught {taught['spam']} spam and {taught['ham']} real messages to {args.workspace}"
    out.result(document, [said, *spam_summary_lines(summary)])


@frozen
class _Export:
    """A file given to read twice (checked, then taught): a regular file is read from disk
    each time; anything else (a pipe, /dev/stdin, a shell's <(...)) can be read only
    once, so its text is kept, read within the same size cap."""

    path: Path
    text: str | None = None


def _export(path: Path) -> _Export:
    too_large = CommandError(f"{path}: larger than {MAX_FILE_BYTES // 1024 // 1024} MiB")
    try:
        status = path.stat()
        if stat.S_ISREG(status.st_mode):
            if status.st_size > MAX_FILE_BYTES:
                raise too_large
            return _Export(path)
        with path.open("rb") as stream:
            content = stream.read(MAX_FILE_BYTES + 1)
        if len(content) > MAX_FILE_BYTES:
            raise too_large
        # utf-8-sig: a spreadsheet's export often starts with a byte order mark.
        return _Export(path, content.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8 text") from None
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror or 'cannot be read'}") from None


def _check(export: _Export) -> None:
    with _opened(export) as lines:
        try:
            count = sum(1 for _ in read_history(lines))
        except HistoryError as error:
            raise CommandError(f"{export.path}: {error}") from None
    if count == 0:
        raise CommandError(f"{export.path}: no message in it")


@contextmanager
def _opened(export: _Export) -> Iterator[TextIO]:
    if export.text is not None:
        yield io.StringIO(export.text, newline="")
        return
    path = export.path
    try:
        with path.open(encoding="utf-8-sig", newline="") as lines:
            yield lines
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8 text") from None
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror or 'cannot be read'}") from None


async def _stats(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    summary = await runtime.services.spam.summary(args.workspace)
    out.result(spam_summary_view(args.workspace, summary), spam_summary_lines(summary))
