"""`intake migrate`: bring the database schema up to date."""

from __future__ import annotations

import argparse

from intake.containers import Runtime
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command
from intake.entrypoints.cli.runner import with_runtime


def register(commands: Subparsers) -> None:
    add_command(
        commands,
        "migrate",
        help="apply pending database migrations",
        handler=with_runtime(_migrate),
    )


async def _migrate(runtime: Runtime, args: argparse.Namespace, out: Output) -> None:
    applied = await runtime.store.migrate()
    lines = [f"applied {name}" for name in applied] or ["the database schema is up to date"]
    out.result({"applied": applied}, lines)
