"""The socket `intake serve` listens on, bound before the server says it serves, and
uvicorn run on it: one process, or a supervisor of several that share it."""

from __future__ import annotations

import socket
from contextlib import suppress
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

from intake.entrypoints.cli.runner import CommandError

BACKLOG = 2048  # uvicorn's own default


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


def run_server(listener: socket.socket, app: str, **options: Any) -> None:
    """`uvicorn.run(app, **options)`, on a socket bound already: uvicorn.run's own steps.
    Returns when the server has stopped (SIGINT or SIGTERM); a server that could not
    start is a CommandError."""
    config = uvicorn.Config(app, **options)
    try:
        if config.workers > 1:
            Multiprocess(config, sockets=[listener]).run()
            return
        server = uvicorn.Server(config)
        with suppress(SystemExit):  # a failed startup: uvicorn has logged why
            server.run(sockets=[listener])
        if not server.started:
            raise CommandError("the server could not start: see the log above")
    except KeyboardInterrupt:
        pass
    finally:
        listener.close()
