"""Running a command: one event loop, one runtime from the composition root, and the
mapping of known failures to exit codes."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TypeAlias

from intake.config import ConfigError, Settings
from intake.containers import Runtime, open_runtime
from intake.entrypoints.cli.output import Output
from intake.logs import JsonFormatter

Handler: TypeAlias = Callable[[argparse.Namespace, Settings, Output], None]
RuntimeCommand: TypeAlias = Callable[[Runtime, argparse.Namespace, Output], Awaitable[None]]


class CommandError(Exception):
    """A command that cannot be carried out for a reason of its own (a file it cannot
    write, a refused combination of options); the message says why. Exit code 1."""


def with_runtime(command: RuntimeCommand) -> Handler:
    """A handler that runs `command` inside a runtime opened for it and closed after."""

    def handler(args: argparse.Namespace, settings: Settings, out: Output) -> None:
        asyncio.run(_run(command, args, settings, out))

    return handler


async def _run(
    command: RuntimeCommand, args: argparse.Namespace, settings: Settings, out: Output
) -> None:
    async with opened_runtime(settings) as runtime:
        await command(runtime, args, out)


@asynccontextmanager
async def opened_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """`open_runtime`, with a database URL the store cannot use reported as configuration."""
    async with AsyncExitStack() as stack:
        try:
            runtime = await stack.enter_async_context(open_runtime(settings))
        except ConfigError:
            raise
        except ValueError as error:
            # The store refuses a database URL it cannot use with a plain ValueError.
            raise ConfigError(f"INTAKE_DATABASE_URL: {error}") from None
        yield runtime


TRACE = 5  # uvicorn's level below DEBUG


def log_level(settings: Settings) -> int:
    name = settings.log_level.upper()
    levels = {**logging.getLevelNamesMapping(), "TRACE": TRACE}
    if name not in levels:
        raise ConfigError(f"INTAKE_LOG_LEVEL: unknown level {settings.log_level!r}")
    return levels[name]


def configure_logging(settings: Settings) -> None:
    # stderr: stdout carries the command's answer, which scripts parse.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    logging.basicConfig(level=log_level(settings), handlers=[handler])
