"""`intake notify ...`: who gets an email for each accepted submission to a form."""

from __future__ import annotations

import argparse

from intake.admin_runtime import AdminRuntime
from intake.entrypoints.cli.output import Output, key_values, table
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group
from intake.entrypoints.cli.runner import read_only, with_runtime
from intake.presentation.views import delivery_record_view, recipient_view


def register(commands: Subparsers) -> None:
    group = add_group(
        commands,
        "notify",
        help="manage who is emailed about a form's accepted submissions (INTAKE_SMTP_URL)",
    )

    add = add_command(group, "add", help="add a notification recipient", handler=with_runtime(_add))
    add.add_argument("--form", required=True, metavar="ID")
    add.add_argument("--email", required=True, metavar="ADDRESS")

    listing = add_command(
        group, "list", help="list a form's notification recipients", handler=read_only(_list)
    )
    listing.add_argument("--form", required=True, metavar="ID")

    remove = add_command(
        group, "remove", help="remove a notification recipient", handler=with_runtime(_remove)
    )
    remove.add_argument("recipient_id", metavar="RECIPIENT_ID")

    test = add_command(
        group,
        "test",
        help="queue a test mail to this recipient only (the relay sends it)",
        handler=with_runtime(_test),
    )
    test.add_argument("recipient_id", metavar="RECIPIENT_ID")


async def _add(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    recipient = await runtime.services.recipients.add(args.form, args.email)
    view = recipient_view(recipient)
    lines = [f"recipient {recipient.recipient_id} added", *key_values(view)]
    if runtime.settings.smtp_url is None:
        out.note("note: INTAKE_SMTP_URL is not set; the relay cannot send mail until it is")
    out.result(view, lines)


async def _list(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    recipients = await runtime.services.recipients.all(args.form)
    rows = ((r.recipient_id, r.email, r.status.value) for r in recipients)
    lines = table(("RECIPIENT", "EMAIL", "STATUS"), rows) if recipients else []
    out.result(
        {"recipients": [recipient_view(r) for r in recipients]},
        lines or ["no notification recipients"],
    )


async def _remove(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    await runtime.services.recipients.remove(args.recipient_id)
    out.result(
        {"recipient_id": args.recipient_id, "removed": True},
        [f"recipient {args.recipient_id} removed"],
    )


async def _test(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    record = await runtime.services.recipients.test(args.recipient_id)
    if runtime.settings.smtp_url is None:
        out.note("note: INTAKE_SMTP_URL is not set; the relay parks the test mail as dead")
    out.result(
        delivery_record_view(record),
        [
            f"mail.test queued to {args.recipient_id}: delivery {record.delivery.delivery_id}",
            "the relay sends it on its next round (intake outbox list shows the result)",
        ],
    )
