"""`intake outbox ...`: what the relay has to deliver, what it gave up on, and retrying."""

from __future__ import annotations

import argparse

from intake.admin_runtime import AdminRuntime
from intake.entrypoints.cli.output import Output, table
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group, positive_int
from intake.entrypoints.cli.runner import read_only, with_runtime
from intake.presentation.views import outbox_view

# A delivery's id (delivery_rules.delivery_id); an event's starts with evt_.
DELIVERY_PREFIX = "dlv_"


def register(commands: Subparsers) -> None:
    group = add_group(commands, "outbox", help="inspect deliveries and retry dead ones")

    listing = add_command(
        group,
        "list",
        help="list outbox events and their deliveries (most recent deliveries first)",
        handler=read_only(_list),
    )
    listing.add_argument(
        "--dead", action="store_true", help="only deliveries parked as dead, to retry"
    )
    listing.add_argument(
        "--limit", type=positive_int, default=100, metavar="N", help="at most N rows (100)"
    )

    retry = add_command(
        group,
        "retry",
        help="make an event's dead deliveries (or one delivery, by its dlv_ id) due now, "
        "with a fresh round of attempts",
        handler=with_runtime(_retry),
    )
    retry.add_argument("event_id", metavar="EVENT_ID|DELIVERY_ID")


async def _list(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    outbox = await runtime.services.deliveries.outbox(dead_only=args.dead, limit=args.limit)
    deliveries = outbox.deliveries
    rows = (
        (
            d.event_id,
            d.kind.value,
            d.destination_id,
            d.state.value,
            d.attempts,
            (d.next_attempt_at.isoformat() if d.next_attempt_at else None),
            d.last_error,
        )
        for d in deliveries
    )
    headers = ("EVENT", "KIND", "DESTINATION", "STATE", "ATTEMPTS", "NEXT ATTEMPT", "LAST ERROR")
    lines = (
        table(headers, rows)
        if deliveries
        else ["no dead deliveries" if args.dead else "no deliveries"]
    )
    if len(deliveries) < outbox.total:
        what = "dead deliveries" if args.dead else "deliveries"
        lines.append(f"{len(deliveries)} of {outbox.total} {what} shown (--limit)")
    if not args.dead:
        lines.append(f"{outbox.waiting} events waiting for the relay to fan them out")
    out.result(outbox_view(outbox, dead_only=args.dead), lines)


async def _retry(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    if args.event_id.startswith(DELIVERY_PREFIX):
        await runtime.services.deliveries.retry(args.event_id)
        out.result(
            {"delivery_id": args.event_id, "retried": 1},
            [f"delivery {args.event_id} due again; the relay sends it on its next round"],
        )
        return
    count = await runtime.services.deliveries.retry_event(args.event_id)
    out.result(
        {"event_id": args.event_id, "retried": count},
        [
            f"{count} dead {'delivery' if count == 1 else 'deliveries'} of {args.event_id} "
            "due again; the relay sends them on its next round"
        ],
    )
