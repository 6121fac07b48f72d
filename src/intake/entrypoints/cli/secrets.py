"""`intake secrets ...`: the key that seals the secrets the database keeps."""

from __future__ import annotations

import argparse
import asyncio

from intake.config import Settings
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command, add_group
from intake.entrypoints.cli.runner import opened_schema
from intake.resources import new_secret_key
from intake.service.sealing import SealingReport, SecretSealing


def register(commands: Subparsers) -> None:
    group = add_group(commands, "secrets", help="the key that seals stored secrets")
    add_command(
        group,
        "generate-key",
        help="print a new key for INTAKE_SECRET_KEY (nothing is stored)",
        handler=_generate_key,
    )
    add_command(
        group,
        "rotate",
        help="seal every stored secret again under INTAKE_SECRET_KEY",
        handler=_rotate,
    )


def _generate_key(args: argparse.Namespace, settings: Settings, out: Output) -> None:
    key = new_secret_key()
    out.result({"key": key}, [key])


def _rotate(args: argparse.Namespace, settings: Settings, out: Output) -> None:
    report = asyncio.run(_run_rotation(settings))
    lines = [
        f"{report.resealed} secret(s) sealed again under key {report.key_id}",
        *(f"  {name}: {count}" for name, count in sorted(report.by_column.items())),
        f"{report.current} already under it",
    ]
    if report.changed:
        lines.append(f"{report.changed} changed while this ran: run it again to check them")
    out.result(report.to_json(), lines)


async def _run_rotation(settings: Settings) -> SealingReport:
    async with opened_schema(settings) as schema:
        return await SecretSealing(schema.store, schema.sealer).rotate()
