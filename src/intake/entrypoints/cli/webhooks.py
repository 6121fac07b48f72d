"""`intake webhook ...`: the endpoints a form's submissions are POSTed to, signed."""

from __future__ import annotations

import argparse

from intake.admin_runtime import AdminRuntime
from intake.entrypoints.cli.output import Output, key_values, table
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group
from intake.entrypoints.cli.runner import read_only, with_runtime
from intake.presentation.views import created_endpoint_view, endpoint_view


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
        help="remove a webhook endpoint; its pending deliveries are dropped as dead",
        handler=with_runtime(_remove),
    )
    remove.add_argument("endpoint_id", metavar="ENDPOINT_ID")


async def _add(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    created = await runtime.admin.add_webhook(
        args.form, args.url, include_flagged=args.include_flagged
    )
    view = endpoint_view(created.endpoint)
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
    endpoints = await runtime.admin.webhooks(args.form)
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
    out.result(
        {"endpoints": [endpoint_view(e) for e in endpoints]}, lines or ["no webhook endpoints"]
    )


async def _remove(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    await runtime.admin.remove_webhook(args.endpoint_id)
    out.result(
        {"endpoint_id": args.endpoint_id, "removed": True},
        [f"webhook endpoint {args.endpoint_id} removed"],
    )
