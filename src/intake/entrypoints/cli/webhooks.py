"""`intake webhook ...`: the endpoints a form's submissions are POSTed to, signed."""

from __future__ import annotations

import argparse

from intake.admin_runtime import AdminRuntime
from intake.domain.deliveries import DeliveryState
from intake.entrypoints.cli.output import Output, key_values, table
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group, positive_int
from intake.entrypoints.cli.runner import read_only, with_runtime
from intake.presentation.views import (
    created_endpoint_view,
    delivery_record_view,
    endpoint_view,
    retried_dead_view,
)


def register(commands: Subparsers) -> None:
    group = add_group(commands, "webhook", help="manage a form's webhook endpoints")

    add = add_command(
        group,
        "add",
        help="add a webhook endpoint; its signing secret is shown this once",
        handler=with_runtime(_add),
    )
    add.add_argument("--form", required=True, metavar="ID")
    add.add_argument("--url", required=True, metavar="URL", help="https://, public address")
    add.add_argument(
        "--include-flagged",
        action="store_true",
        help="also send submission.flagged events (spam and unverified submissions)",
    )

    listing = add_command(
        group, "list", help="list a form's webhook endpoints", handler=read_only(_list)
    )
    listing.add_argument("--form", required=True, metavar="ID")

    remove = add_command(
        group,
        "remove",
        help="remove a webhook endpoint; its undelivered deliveries are dropped",
        handler=with_runtime(_remove),
    )
    remove.add_argument("endpoint_id", metavar="ENDPOINT_ID")

    test = add_command(
        group,
        "test",
        help="queue a signed webhook.test event to this endpoint only (the relay sends it)",
        handler=with_runtime(_test),
    )
    test.add_argument("endpoint_id", metavar="ENDPOINT_ID")

    retry_dead = add_command(
        group,
        "retry-dead",
        help="make every dead delivery to this endpoint due now, its attempts afresh",
        handler=with_runtime(_retry_dead),
    )
    retry_dead.add_argument("endpoint_id", metavar="ENDPOINT_ID")

    deliveries = add_command(
        group,
        "deliveries",
        help="an endpoint's deliveries, newest first, with their attempts",
        handler=read_only(_deliveries),
    )
    deliveries.add_argument("endpoint_id", metavar="ENDPOINT_ID")
    deliveries.add_argument("--state", choices=[s.value for s in DeliveryState])
    deliveries.add_argument(
        "--limit", type=positive_int, default=50, metavar="N", help="at most N rows (50, max 200)"
    )


async def _add(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    created = await runtime.services.webhooks.add(
        args.form, args.url, include_flagged=args.include_flagged
    )
    view = endpoint_view(created.endpoint, full_url=True)
    # The one place the secret is printed; receivers verify signatures with it.
    out.result(
        created_endpoint_view(created),
        [
            f"webhook endpoint {created.endpoint.endpoint_id} added",
            *key_values(view),
            f"secret={created.secret}",
            "store the secret now: it is not shown again",
        ],
    )


async def _list(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    endpoints = await runtime.services.webhooks.all(args.form)
    rows = (
        (
            e.endpoint_id,
            "enabled" if e.enabled else "disabled",
            "created+flagged" if e.include_flagged else "created",
            e.url,
        )
        for e in endpoints
    )
    lines = table(("ENDPOINT", "STATE", "EVENTS", "URL"), rows) if endpoints else []
    # The operator's own command: each URL in full.
    views = [endpoint_view(e, full_url=True) for e in endpoints]
    out.result({"endpoints": views}, lines or ["no webhook endpoints"])


async def _remove(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    await runtime.services.webhooks.remove(args.endpoint_id)
    out.result(
        {"endpoint_id": args.endpoint_id, "removed": True},
        [f"webhook endpoint {args.endpoint_id} removed"],
    )


async def _test(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    record = await runtime.services.webhooks.test(args.endpoint_id)
    out.result(
        delivery_record_view(record),
        [
            f"webhook.test queued to {args.endpoint_id}: delivery {record.delivery.delivery_id}",
            "the relay sends it on its next round (intake webhook deliveries shows the result)",
        ],
    )


async def _retry_dead(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    retried = await runtime.services.deliveries.retry_dead(args.endpoint_id)
    if retried == 0:
        line = f"no dead deliveries to {args.endpoint_id}"
    else:
        which = "1 dead delivery" if retried == 1 else f"{retried} dead deliveries"
        line = f"{which} to {args.endpoint_id} due now: the relay sends them on its next round"
    out.result(retried_dead_view(args.endpoint_id, retried), [line])


async def _deliveries(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    page = await runtime.services.deliveries.of_endpoint(
        args.endpoint_id, state=args.state, limit=args.limit
    )
    rows = (
        (
            r.delivery.delivery_id,
            r.event_type.value,
            r.delivery.state.value,
            r.delivery.attempts,
            _last_attempt(r.attempts[-1].status_code, r.attempts[-1].error) if r.attempts else "",
            r.delivery.created_at.isoformat(),
        )
        for r in page.deliveries
    )
    headers = ("DELIVERY", "EVENT", "STATE", "ATTEMPTS", "LAST ATTEMPT", "CREATED")
    lines = table(headers, rows) if page.deliveries else ["no deliveries"]
    if page.next_cursor is not None:
        lines.append(f"the newest {len(page.deliveries)} shown (--limit)")
    out.result(
        {
            "deliveries": [delivery_record_view(r) for r in page.deliveries],
            "next_cursor": page.next_cursor,
        },
        lines,
    )


def _last_attempt(status_code: int | None, error: str | None) -> str:
    return error or (f"HTTP {status_code}" if status_code is not None else "")
