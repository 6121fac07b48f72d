"""`intake purge`: housekeeping, run on a schedule. Deletes the idempotency records past
their 24 hours and the outbox rows published longer ago than the retention; never an
unpublished row."""

from __future__ import annotations

import argparse
from datetime import timedelta

from intake.containers import Runtime
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command
from intake.entrypoints.cli.runner import with_runtime


def register(commands: Subparsers) -> None:
    purge = add_command(
        commands,
        "purge",
        help="delete expired idempotency keys and old published outbox rows; "
        "safe to run on a schedule",
        handler=with_runtime(_purge),
    )
    purge.add_argument(
        "--outbox-retention-days",
        type=_days,
        metavar="N",
        help="keep published outbox rows N days (default: INTAKE_OUTBOX_RETENTION_DAYS, 7)",
    )


def _days(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


async def _purge(runtime: Runtime, args: argparse.Namespace, out: Output) -> None:
    days: int = (
        runtime.settings.outbox_retention_days
        if args.outbox_retention_days is None
        else args.outbox_retention_days
    )
    counts = await runtime.store.submissions.purge(runtime.clock.now(), timedelta(days=days))
    out.result(
        {"idempotency": counts.idempotency, "outbox": counts.outbox},
        [
            f"deleted {counts.idempotency} expired idempotency "
            + ("key" if counts.idempotency == 1 else "keys"),
            f"deleted {counts.outbox} outbox "
            + ("row" if counts.outbox == 1 else "rows")
            + f" published more than {days} "
            + ("day" if days == 1 else "days")
            + " ago",
        ],
    )
