"""`intake erase --workspace ID --email ADDRESS [--dry-run]`: an erasure on request, through
the same service as POST /v1/erasures (docs/privacy.md, "Answering an erasure request")."""

from __future__ import annotations

import argparse

from intake.admin_runtime import AdminRuntime
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command
from intake.entrypoints.cli.runner import with_runtime
from intake.presentation.privacy import erasure_receipt_lines, erasure_receipt_view


def register(commands: Subparsers) -> None:
    erase = add_command(
        commands,
        "erase",
        help="erase every submission of a workspace whose reply-to or any field holds an "
        "email address (a person's request): data, files, idempotency keys and undelivered "
        "deliveries; webhook endpoints are sent submission.deleted. Prints a receipt",
        handler=with_runtime(_erase),
    )
    erase.add_argument("--workspace", required=True, metavar="ID")
    erase.add_argument("--email", required=True, metavar="ADDRESS")
    erase.add_argument(
        "--dry-run", action="store_true", help="list what would be erased, erase nothing"
    )


async def _erase(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    receipt = await runtime.services.privacy.erase_person(
        args.workspace, args.email, dry_run=args.dry_run
    )
    out.result(erasure_receipt_view(receipt), erasure_receipt_lines(receipt))
