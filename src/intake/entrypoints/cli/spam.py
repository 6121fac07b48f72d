"""`intake spam train|stats`: bringing an owner's history to a workspace's spam filter,
and what the filter knows (docs/scoring.md, "Teaching the filter")."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

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
    files = {
        label: path for label, path in ((Label.SPAM, args.spam), (Label.HAM, args.ham)) if path
    }
    if not files:
        raise CommandError("nothing to teach: give --spam FILE, --ham FILE or both")
    admin = runtime.admin
    await admin.workspace(args.workspace)  # an unknown workspace before any file is read
    # Every file read through once before anything is taught: a file refused halfway
    # teaches nothing.
    for path in files.values():
        _check(path)
    taught = {label.value: 0 for label in Label}
    for label, path in files.items():
        with _opened(path) as lines:
            taught[label.value] = await admin.train_spam_filter(
                args.workspace, label, read_history(lines)
            )
    summary = await admin.spam_summary(args.workspace)
    document = {**spam_summary_view(args.workspace, summary), "taught": taught}
    said = f"taught {taught['spam']} spam and {taught['ham']} real messages to {args.workspace}"
    out.result(document, [said, *spam_summary_lines(summary)])


def _check(path: Path) -> None:
    with _opened(path) as lines:
        try:
            count = sum(1 for _ in read_history(lines))
        except HistoryError as error:
            raise CommandError(f"{path}: {error}") from None
    if count == 0:
        raise CommandError(f"{path}: no message in it")


@contextmanager
def _opened(path: Path) -> Iterator[TextIO]:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise CommandError(f"{path}: larger than {MAX_FILE_BYTES // 1024 // 1024} MiB")
        # utf-8-sig: a spreadsheet's export often starts with a byte order mark.
        with path.open(encoding="utf-8-sig", newline="") as lines:
            yield lines
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not UTF-8 text") from None
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror or 'cannot be read'}") from None


async def _stats(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    summary = await runtime.admin.spam_summary(args.workspace)
    out.result(spam_summary_view(args.workspace, summary), spam_summary_lines(summary))
