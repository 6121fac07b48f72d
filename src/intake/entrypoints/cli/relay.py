"""`intake relay [--once]`: deliver committed events to webhooks and mail recipients."""

from __future__ import annotations

import argparse
import logging
import signal

import anyio
from anyio import CancelScope

from intake.containers import Runtime
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command
from intake.entrypoints.cli.runner import with_runtime
from intake.service.relay import RelayRound

log = logging.getLogger("intake.relay")


def register(commands: Subparsers) -> None:
    relay = add_command(
        commands,
        "relay",
        help="deliver submissions to webhooks and notification mail until stopped "
        "(SIGINT or SIGTERM: sends in flight finish first)",
        handler=with_runtime(_relay),
    )
    relay.add_argument("--once", action="store_true", help="deliver what is due now, then exit")


async def _relay(runtime: Runtime, args: argparse.Namespace, out: Output) -> None:
    if args.once:
        _print(out, await runtime.relay.run_once(), "")
        return
    stop = _Stop()
    totals: RelayRound | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(_watch_signals, stop, group.cancel_scope)
        log.info("relay started")
        totals = await runtime.relay.run_forever(stop.event)
        group.cancel_scope.cancel()
    if stop.forced or totals is None:
        raise KeyboardInterrupt  # exit 130, as an interrupted command does
    log.info("relay stopped")
    _print(out, totals, "in all: ")


class _Stop:
    def __init__(self) -> None:
        self.event = anyio.Event()
        self.forced = False


async def _watch_signals(stop: _Stop, scope: CancelScope) -> None:
    """The first signal stops the relay after the sends in flight; a second one stops
    it at once (their deliveries come round again when their leases expire)."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            if stop.event.is_set():
                stop.forced = True
                scope.cancel()
                return
            log.info(
                "relay stopping after the sends in flight",
                extra={"signal": signal.Signals(signum).name},
            )
            stop.event.set()


def _print(out: Output, totals: RelayRound, prefix: str) -> None:
    out.result(
        totals.as_dict(),
        [
            f"{prefix}{totals.fanned_out} events fanned out; {totals.delivered} delivered, "
            f"{totals.failed} failed (to be retried), {totals.dead} dead"
        ],
    )
