"""The socket `intake serve` listens on, bound before the server says it serves, and
uvicorn run on it: one process, or a supervisor of several that share it."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from intake.entrypoints.cli.runner import CommandError

BACKLOG = 2048  # uvicorn's own default
_READY_POLL = 0.1  # seconds between two rounds of asking the workers whether they serve


def listen(host: str, port: int) -> socket.socket:
    """Bound and listening, as uvicorn would bind it: a client that connects now waits in
    the backlog until a worker accepts. A port in use (or an address not ours) is a
    CommandError of one line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP by name: asyncio sets TCP_NODELAY only on connections of such a socket.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as error:
        sock.close()
        reason = (error.strerror or str(error)).lower()
        raise CommandError(f"cannot listen on {_address(host, port)}: {reason}") from None
    sock.set_inheritable(True)  # the workers' processes serve it
    return sock


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def run_server(
    listener: socket.socket, app: str, *, on_ready: Callable[[], None], **options: Any
) -> None:
    """`uvicorn.run(app, **options)`, on a socket bound already: uvicorn.run's own steps.
    `on_ready` is called once every worker has started its application and accepts
    connections (a client that connects earlier waits in the backlog, unanswered).
    Returns when the server has stopped (SIGINT or SIGTERM); a server that could not
    start is a CommandError."""
    config = uvicorn.Config(app, **options)
    try:
        if config.workers > 1:
            supervisor = _Supervisor(config, [listener], on_ready)
            supervisor.run()
            if supervisor.failed_to_start:
                raise CommandError("the server could not start: see the log above")
            return
        server = _Server(config, on_ready)
        with suppress(SystemExit):  # a failed startup: uvicorn has logged why
            server.run(sockets=[listener])
        if not server.started:
            raise CommandError("the server could not start: see the log above")
    except KeyboardInterrupt:
        pass
    finally:
        listener.close()


class _Server(uvicorn.Server):
    """One worker in this process: ready once its startup (the application's, then
    serving the socket) is done."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_ready()


class _Supervisor(Multiprocess):
    """uvicorn's supervisor of several worker processes, which says when every one of
    them serves: each answers the supervisor's health pings with whether its server has
    started (uvicorn's `Process.is_ready`). Waited for before the supervisor's loop
    starts pinging the same pipes."""

    def __init__(
        self, config: uvicorn.Config, sockets: list[socket.socket], on_ready: Callable[[], None]
    ) -> None:
        super().__init__(config, sockets)
        self._on_ready = on_ready

    @property
    def failed_to_start(self) -> bool:
        return any(process.exitcode == STARTUP_FAILURE for process in self.processes)

    def init_processes(self) -> None:
        super().init_processes()
        if self._all_serving():
            self._on_ready()

    def _all_serving(self) -> bool:
        """True once every worker serves; False as soon as one has exited (the loop then
        finds out why) or a signal asks the supervisor to stop."""
        waiting = list(self.processes)
        while waiting:
            if self.should_exit.is_set() or self.signal_queue:
                return False
            if not all(process.process.is_alive() for process in waiting):
                return False
            waiting = [process for process in waiting if not process.is_ready(timeout=1)]
            if waiting:
                time.sleep(_READY_POLL)
        return True
