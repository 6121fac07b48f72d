"""`intake purge`: housekeeping, run on a schedule. Deletes the idempotency records past
their 24 hours and the outbox rows published longer ago than the retention; never an
unpublished row. Erases the spam and unverified submissions older than their retention,
with their files; never one whose event is still on its way. With a blob store, it also
sweeps the uploaded files no submission links, and the leftovers of interrupted
uploads, once older than the grace period."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

from intake.config.variables import OUTBOX_RETENTION_DAYS, SPAM_RETENTION_DAYS, UPLOAD_GRACE
from intake.containers import Runtime
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command, non_negative_int
from intake.entrypoints.cli.runner import CommandError, with_runtime
from intake.service.retention import erase_flagged
from intake.service.sweep import sweep_uploads


def register(commands: Subparsers) -> None:
    purge = add_command(
        commands,
        "purge",
        help="delete expired idempotency keys, old published outbox rows, old spam and "
        "unverified submissions and uploaded files no submission links; safe to run on a "
        "schedule",
        handler=with_runtime(_purge),
    )
    purge.add_argument(
        "--outbox-retention-days",
        type=non_negative_int,
        metavar="N",
        help="keep published outbox rows N days "
        f"(default: {OUTBOX_RETENTION_DAYS.name}, {OUTBOX_RETENTION_DAYS.default_text()})",
    )
    purge.add_argument(
        "--spam-retention-days",
        type=non_negative_int,
        metavar="N",
        help="erase spam and unverified submissions after N days, 0 to keep them "
        f"(default: {SPAM_RETENTION_DAYS.name}, {SPAM_RETENTION_DAYS.default_text()})",
    )
    purge.add_argument(
        "--upload-grace",
        type=non_negative_int,
        metavar="SECONDS",
        help="leave unlinked uploads younger than this alone: they may belong to a request "
        f"still under way (default: {UPLOAD_GRACE.name}, {UPLOAD_GRACE.default_text()})",
    )


async def _purge(runtime: Runtime, args: argparse.Namespace, out: Output) -> None:
    days: int = (
        runtime.settings.outbox_retention_days
        if args.outbox_retention_days is None
        else args.outbox_retention_days
    )
    grace = timedelta(seconds=_grace(runtime, args))  # checked before anything is deleted
    now = runtime.clock.now()
    counts = await runtime.store.submissions.purge(now, timedelta(days=days))
    document: dict[str, object] = {"idempotency": counts.idempotency, "outbox": counts.outbox}
    lines = [
        f"deleted {counts.idempotency} expired idempotency "
        + ("key" if counts.idempotency == 1 else "keys"),
        f"deleted {counts.outbox} outbox "
        + ("row" if counts.outbox == 1 else "rows")
        + f" published more than {days} "
        + ("day" if days == 1 else "days")
        + " ago",
    ]
    lines.append(await _erase_flagged(runtime, args, now, document))
    if runtime.blobs is not None:
        swept = await sweep_uploads(runtime.blobs, runtime.store.submissions, now, grace)
        document.update(orphan_files=swept.orphans, incomplete_uploads=swept.incomplete)
        lines += [
            f"deleted {swept.orphans} orphaned uploaded "
            + ("file" if swept.orphans == 1 else "files")
            + f" older than {_duration(grace)}",
            f"deleted {swept.incomplete} incomplete "
            + ("upload" if swept.incomplete == 1 else "uploads")
            + f" older than {_duration(grace)}",
        ]
    out.result(document, lines)


async def _erase_flagged(
    runtime: Runtime, args: argparse.Namespace, now: datetime, document: dict[str, object]
) -> str:
    """Erases the spam and unverified submissions past their retention; the line that
    says so. Their files go with them, so the sweep that follows finds none of them."""
    days: int = (
        runtime.settings.spam_retention_days
        if args.spam_retention_days is None
        else args.spam_retention_days
    )
    erased = await erase_flagged(
        runtime.store.submissions, runtime.blobs, now, timedelta(days=days)
    )
    document.update(flagged_submissions=erased.submissions, flagged_files=erased.files)
    if days == 0:
        return "kept every spam and unverified submission (spam retention 0: forever)"
    return (
        f"erased {erased.submissions} spam or unverified "
        + ("submission" if erased.submissions == 1 else "submissions")
        + f" older than {days} "
        + ("day" if days == 1 else "days")
        + f", and {erased.files} "
        + ("file" if erased.files == 1 else "files")
    )


def _grace(runtime: Runtime, args: argparse.Namespace) -> float:
    if args.upload_grace is None:
        return runtime.settings.upload_grace
    timeout = runtime.settings.upload_timeout
    # As for INTAKE_UPLOAD_GRACE: a file is stored before its request commits, so a
    # shorter grace could take a file of an upload still under way for an orphan.
    if args.upload_grace <= timeout:
        raise CommandError(
            f"--upload-grace ({args.upload_grace} s) must be longer than "
            f"INTAKE_UPLOAD_TIMEOUT ({timeout:g} s)"
        )
    return float(args.upload_grace)


def _duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}" + ("" if count == 1 else "s")
    return f"{seconds} second" + ("" if seconds == 1 else "s")
