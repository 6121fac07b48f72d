"""Running a command: one event loop, what the command runs on (a management command's
`AdminRuntime`, the relay's `RelayRuntime`, `intake migrate`'s `Schema`, a serving
process's `ServeRuntime`), and the mapping of known failures to exit codes. The relay's
bootstrap and a serving process's load HTTP clients (and Redis): each is imported only by
what needs it."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TypeAlias

from intake.admin_runtime import AdminRuntime, open_admin_runtime
from intake.config import ConfigError, Settings
from intake.config.startup import redis_description, store_description, unknown_variables
from intake.entrypoints.cli.output import Output
from intake.logs import log_to_stderr
from intake.ports.store_opening import StoreOpening
from intake.resources import open_schema
from intake.service.schema import Schema

if TYPE_CHECKING:
    from intake.relay_runtime import RelayRuntime
    from intake.serve_runtime import ServeRuntime

log = logging.getLogger("intake.cli")

Handler: TypeAlias = Callable[[argparse.Namespace, Settings, Output], None]
AdminCommand: TypeAlias = Callable[[AdminRuntime, argparse.Namespace, Output], Awaitable[None]]
RelayCommand: TypeAlias = Callable[["RelayRuntime", argparse.Namespace, Output], Awaitable[None]]


class CommandError(Exception):
    """A command that cannot be carried out for a reason of its own (a file it cannot
    write, a refused combination of options); the message says why. Exit code 1."""


def with_runtime(command: AdminCommand, *, opening: StoreOpening = StoreOpening.WRITE) -> Handler:
    """A handler that runs `command` on an `AdminRuntime` opened for it and closed after.
    A command that only reads says so (StoreOpening.READ): it then makes nothing, and
    a database that does not exist or is not migrated is refused."""

    def handler(args: argparse.Namespace, settings: Settings, out: Output) -> None:
        asyncio.run(_run(command, opening, args, settings, out))

    return handler


def read_only(command: AdminCommand) -> Handler:
    """`with_runtime` for a command that only reads: it makes no database, and says so
    when there is none, or one not migrated, rather than answer from an empty one."""
    return with_runtime(command, opening=StoreOpening.READ)


async def _run(
    command: AdminCommand,
    opening: StoreOpening,
    args: argparse.Namespace,
    settings: Settings,
    out: Output,
) -> None:
    async with open_admin_runtime(settings, opening) as runtime:
        await command(runtime, args, out)


def with_relay(command: RelayCommand) -> Handler:
    """A handler that runs `command` on a `RelayRuntime` opened for it and closed after."""

    async def run(args: argparse.Namespace, settings: Settings, out: Output) -> None:
        log_what_it_uses(settings)
        # Imported here: the relay's senders load an HTTP client no other command needs.
        from intake.relay_runtime import open_relay_runtime  # noqa: PLC0415

        async with open_relay_runtime(settings) as runtime:
            await command(runtime, args, out)

    def handler(args: argparse.Namespace, settings: Settings, out: Output) -> None:
        asyncio.run(run(args, settings, out))

    return handler


@asynccontextmanager
async def opened_serve_runtime(settings: Settings) -> AsyncIterator[ServeRuntime]:
    """What a serving worker opens (`open_serve_runtime`), for `intake serve` to check
    its settings before the workers start. Redis's URL is checked, but Redis is not
    asked whether it answers: each worker asks as it starts, and says it is down for
    itself (it is the one that limits on its own meanwhile)."""
    # They load the HTTP clients, Redis and the containers: only `intake serve` imports them.
    from dependency_injector import providers  # noqa: PLC0415

    from intake.client_resources import rate_limiter_resource  # noqa: PLC0415
    from intake.containers import opened  # noqa: PLC0415
    from intake.serve_runtime import serve_container  # noqa: PLC0415

    container = serve_container(settings)
    container.rate_limiter.override(
        providers.Resource(rate_limiter_resource, settings=settings, check_redis=False)
    )
    async with opened(container, container.runtime) as runtime:
        yield runtime


@asynccontextmanager
async def opened_schema(settings: Settings) -> AsyncIterator[Schema]:
    """The store's schema alone (`open_schema`)."""
    async with open_schema(settings) as schema:
        yield schema


def log_what_it_uses(settings: Settings, *, rate_limits: bool = False) -> None:
    """As a process that serves, relays or migrates starts: its store, and for a serving
    one the Redis of its rate limits (passwords masked), so that a setting misspelled or
    left out shows before anything is written."""
    facts = {"store": store_description(settings.database_url)}
    if rate_limits:
        facts["rate_limits"] = redis_description(settings.redis_url)
    log.info(
        "; ".join(f"{name.replace('_', ' ')}: {value}" for name, value in facts.items()),
        extra=facts,
    )


def warn_of_unknown_variables(env: Mapping[str, str]) -> None:
    """One warning for each INTAKE_* variable that is no setting: most likely one
    misspelled, whose setting then keeps its default."""
    for unknown in unknown_variables(env):
        log.warning(
            unknown.message(), extra={"variable": unknown.name, "suggestion": unknown.suggestion}
        )


TRACE = 5  # uvicorn's level below DEBUG


def log_level(settings: Settings) -> int:
    name = settings.log_level.upper()
    levels = {**logging.getLevelNamesMapping(), "TRACE": TRACE}
    if name not in levels:
        raise ConfigError(f"INTAKE_LOG_LEVEL: unknown level {settings.log_level!r}")
    return levels[name]


def configure_logging(settings: Settings) -> None:
    # stderr: stdout carries the command's answer, which scripts parse.
    log_to_stderr(log_level(settings))
