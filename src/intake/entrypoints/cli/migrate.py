"""`intake migrate`: bring the database schema up to date."""

from __future__ import annotations

import argparse
import asyncio

from intake.config import Settings
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command
from intake.entrypoints.cli.runner import log_what_it_uses, opened_schema


def register(commands: Subparsers) -> None:
    add_command(commands, "migrate", help="apply pending database migrations", handler=_migrate)


def _migrate(args: argparse.Namespace, settings: Settings, out: Output) -> None:
    log_what_it_uses(settings)
    applied, sealed = asyncio.run(_apply(settings))
    lines = [f"applied {name}" for name in applied] or ["the database schema is up to date"]
    if sealed:
        lines.append(f"sealed {sealed} secret(s) kept plain by an older version")
    out.result({"applied": applied, "sealed": sealed}, lines)


async def _apply(settings: Settings) -> tuple[list[str], int]:
    # The store alone: the rest of a runtime would read tables not made yet.
    async with opened_schema(settings) as schema:
        applied = await schema.migrate()
        sealed = await schema.seal_plain_secrets()
    return applied, sealed.resealed
