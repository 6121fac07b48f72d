"""The PostgreSQL store after an outage of its server: it serves again soon after the
server is back, however long the outage was, without being reopened.

The store reaches the server through a TCP relay that the test cuts (every connection
dropped, new ones refused) and restores on the same port, as a restarted server or a
failed-over address would look to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import pytest

from intake.domain.errors import StorageUnavailable
from tests.contract.conftest import PostgresBackend

pytestmark = [pytest.mark.anyio, pytest.mark.services, pytest.mark.slow]

# Long enough for the pool's doubling back-off (1, 2, 4 s...) to put its next attempt far
# past the server's return, had it no bound.
OUTAGE = 8.0
RECOVERY_BOUND = 4.0  # seconds from the server's return to the first query served


class Relay:
    """A TCP relay to the server that can be cut and restored on the same port."""

    def __init__(self, host: str, port: int) -> None:
        self._upstream = (host, port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._relay, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _relay(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        try:
            server_in, server_out = await asyncio.open_connection(*self._upstream)
        except OSError:
            client_out.transport.abort()
            return
        self._writers.update((client_out, server_out))
        await asyncio.gather(
            _pump(client_in, server_out), _pump(server_in, client_out), return_exceptions=True
        )
        self._writers.difference_update((client_out, server_out))


async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    finally:
        sink.transport.abort()


@pytest.fixture
def backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def relay(postgres_url: str) -> AsyncIterator[Relay]:
    parts = urlsplit(postgres_url)
    opened = Relay(parts.hostname or "127.0.0.1", parts.port or 5432)
    await opened.start()
    try:
        yield opened
    finally:
        await opened.cut()


def _through(url: str, relay: Relay) -> str:
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@127.0.0.1:{relay.port}" if userinfo else f"127.0.0.1:{relay.port}"
    return urlunsplit(parts._replace(netloc=netloc))


async def test_the_store_serves_again_soon_after_a_long_outage_ends(
    backend: PostgresBackend, postgres_url: str, relay: Relay
) -> None:
    store = await backend.open_postgres(url=_through(postgres_url, relay), pool_timeout=0.5)
    try:
        assert await store.workspaces.list() == []

        await relay.cut()
        # Requests keep arriving through the outage, as they would in service.
        ends = time.monotonic() + OUTAGE
        while time.monotonic() < ends:
            with pytest.raises(StorageUnavailable):
                await store.workspaces.list()
            await asyncio.sleep(0.1)
        await relay.start()
        back = time.monotonic()

        while True:
            with contextlib.suppress(StorageUnavailable):
                assert await store.workspaces.list() == []
                break
            assert time.monotonic() - back < 30, "the store never served again"
            await asyncio.sleep(0.05)
        recovered = time.monotonic() - back
    finally:
        await store.close()
    assert recovered < RECOVERY_BOUND, f"served again {recovered:.1f} s after the server"
