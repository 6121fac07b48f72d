"""TCP_NODELAY on every connection `intake serve` accepts, with one worker or several.

Without it, a kept-alive connection waits on Nagle's algorithm and the client's delayed
acknowledgement (some 40 ms a request on Linux) whenever an answer goes out in more than
one write. The option is read on the server's own end of a real connection: the test
takes a copy of the worker's socket (pidfd_getfd, Linux 5.6 and later) and asks it.
Speed itself is measured by `make bench` (keep-alive with two workers), not here.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.support.processes import ServedProcess, clean_env

pytestmark = pytest.mark.slow

SYS_PIDFD_GETFD = 438  # the same number on every Linux architecture


def _copy_of_descriptor(pid: int, fd: int) -> int:
    """A descriptor of this process for descriptor `fd` of process `pid`."""
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError) as error:
        pytest.skip(f"pidfd_open is not available here: {error}")
    try:
        copied = int(libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0))
        if copied < 0:
            code = ctypes.get_errno()
            if code in (errno.ENOSYS, errno.EPERM):
                pytest.skip(f"pidfd_getfd is not allowed here: {os.strerror(code)}")
            raise OSError(code, os.strerror(code))
        return copied
    finally:
        os.close(pidfd)


def _servers_nodelay(server_pid: int, client: socket.socket) -> int:
    """TCP_NODELAY on the server's end of `client`'s connection, in whichever of the
    server's processes accepted it."""
    ip, port = client.getsockname()[:2]
    server = psutil.Process(server_pid)
    for process in [server, *server.children(recursive=True)]:
        for connection in process.net_connections(kind="tcp"):
            if connection.raddr and (connection.raddr.ip, connection.raddr.port) == (ip, port):
                copy = socket.socket(fileno=_copy_of_descriptor(process.pid, connection.fd))
                with copy:
                    return copy.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    pytest.fail("no process of the server holds the connection")


@pytest.fixture(
    params=[(1, "httptools"), (2, "httptools"), (1, "h11"), (2, "h11")],
    ids=["one-worker", "two-workers", "one-worker-h11", "two-workers-h11"],
)
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServedProcess]:
    workers, protocol = request.param
    # Several workers need a shared rate limiter to start (the test Redis); only /healthz
    # is asked here, so nothing is written to it.
    shared = {"INTAKE_REDIS_URL": request.getfixturevalue("redis_url")} if workers > 1 else {}
    env = clean_env(
        INTAKE_DATABASE_URL=f"sqlite:///{tmp_path / 'intake.db'}",
        **shared,
        INTAKE_LOG_LEVEL="warning",
        INTAKE_HTTP_PROTOCOL=protocol,
    )
    with ServedProcess(env, tmp_path / "serve.log", workers=workers) as server:
        yield server


def test_every_accepted_connection_has_tcp_nodelay(served: ServedProcess) -> None:
    with contextlib.ExitStack() as stack:
        # Several connections, so that with two workers both are likely to take one.
        clients = [
            stack.enter_context(socket.create_connection(("127.0.0.1", served.port), timeout=5))
            for _ in range(4)
        ]
        for client in clients:
            client.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert client.recv(65536).startswith(b"HTTP/1.1 200 ")

        assert [_servers_nodelay(served.pid, client) != 0 for client in clients] == [True] * 4
