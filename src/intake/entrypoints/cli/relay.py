"""`intake relay [--once]`: deliver committed events to webhooks and mail recipients."""

from __future__ import annotations

import argparse
import logging
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import anyio
from anyio import TASK_STATUS_IGNORED, CancelScope
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.process_collector import ProcessCollector

from intake.domain.errors import StorageUnavailable
from intake.entrypoints.cli.early import HELD, STOP_SIGNALS
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command, port_number
from intake.entrypoints.cli.runner import CommandError, with_relay
from intake.metrics import RelayMetrics
from intake.service.relay import Relay, RelayRound

if TYPE_CHECKING:
    # Only named: the relay's bootstrap loads an HTTP client, which the commands
    # registered beside this one do not need.
    from intake.relay_runtime import RelayRuntime

log = logging.getLogger("intake.relay")


def register(commands: Subparsers) -> None:
    relay = add_command(
        commands,
        "relay",
        help="deliver submissions to webhooks and notification mail until stopped "
        "(SIGINT or SIGTERM: sends in flight finish first)",
        handler=with_relay(_relay),
    )
    relay.add_argument("--once", action="store_true", help="deliver what is due now, then exit")
    relay.add_argument(
        "--metrics-port",
        type=port_number,
        help="serve the relay's Prometheus metrics on this port, at /metrics",
    )
    relay.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        help="address for --metrics-port (default: 127.0.0.1)",
    )


async def _relay(runtime: RelayRuntime, args: argparse.Namespace, out: Output) -> None:
    if args.metrics_port is None:
        await _deliver(runtime, args, out)
        return
    with _metrics_server(runtime.relay, args.metrics_host, args.metrics_port):
        await _deliver(runtime, args, out)


@contextmanager
def _metrics_server(relay: Relay, host: str, port: int) -> Iterator[None]:
    """The relay's own counters on a small HTTP server of prometheus-client's, in a
    thread, for as long as the relay runs."""
    registry = CollectorRegistry()
    ProcessCollector(registry=registry)
    relay.report_progress(RelayMetrics(registry).record)
    try:
        server, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as error:
        raise CommandError(f"--metrics-port {port}: cannot listen on {host}: {error}") from None
    log.info("relay metrics served", extra={"url": f"http://{host}:{port}/metrics"})
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def _deliver(runtime: RelayRuntime, args: argparse.Namespace, out: Output) -> None:
    if args.once:
        _print(out, await runtime.relay.run_once(), "")
        return
    stop = _Stop()
    totals: RelayRound | None = None
    async with anyio.create_task_group() as group:
        # Watching before the first send: a signal held while starting stops it first.
        await group.start(_watch_signals, stop, group.cancel_scope)
        interval = runtime.settings.retention_sweep_interval
        if interval:
            group.start_soon(_sweep_retention, runtime, interval)
        log.info("relay started")
        totals = await runtime.relay.run_forever(stop.event)
        group.cancel_scope.cancel()
    if stop.forced or totals is None:
        raise KeyboardInterrupt  # exit 130, as an interrupted command does
    log.info("relay stopped")
    _print(out, totals, "in all: ")


async def _sweep_retention(runtime: RelayRuntime, interval: int) -> None:
    """The retention sweep (service/retention_sweep.py) at start and every `interval`
    seconds while the relay runs; stopped with it, between two batches or inside one,
    which its transaction then undoes. A sweep the store refuses is tried again next
    time."""
    while True:
        try:
            await runtime.sweep.run()
        except (StorageUnavailable, OSError):
            log.warning("retention sweep failed; tried again at the next one")
        await anyio.sleep(interval)


class _Stop:
    def __init__(self) -> None:
        self.event = anyio.Event()
        self.forced = False


async def _watch_signals(
    stop: _Stop, scope: CancelScope, *, task_status: TaskStatus[None] = TASK_STATUS_IGNORED
) -> None:
    """The first signal stops the relay after the sends in flight; a second one stops
    it at once (their deliveries come round again when their leases expire). A signal
    that came while the relay started (held by early.py) stops it before it sends
    anything; one that comes once it stops is held again, so that it closes cleanly."""
    try:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            if HELD.received:
                _stopping(stop, HELD.received[0])
            task_status.started()
            async for signum in signals:
                if stop.event.is_set():
                    stop.forced = True
                    scope.cancel()
                    return
                _stopping(stop, signum)
    finally:
        HELD.hold()


def _stopping(stop: _Stop, signum: int) -> None:
    log.info(
        "relay stopping after the sends in flight", extra={"signal": signal.Signals(signum).name}
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
