"""Many calls of one Lua script in one round trip to Redis: EVALSHA calls written at once,
without MULTI. Redis runs each call on its own, atomically, one after the other, and
answers each with its own reply, so a call decides exactly as if it had gone alone.

redis-py's Script objects, run in a pipeline, ask SCRIPT EXISTS before every execute: a
round trip more each time. Here the calls go at once, and only when Redis has lost its
script cache (a restart, SCRIPT FLUSH) do the calls it answered NOSCRIPT go again, behind
a SCRIPT LOAD, in one more round trip. A call answered NOSCRIPT ran nothing, so sending
it again counts nothing twice.

The round trip itself is kept lean. A call is packed into the bytes Redis reads once,
by the caller (`command`); a round trip writes the batch's bytes at once on one
connection kept for the batches, and reads the replies (redis_replies.py) under one
timeout. A redis-py pipeline would take a connection from the pool and give it back,
encode every argument again, and read each reply under a timeout of its own: most of
the worker's cost of a hit went there. The connection is still redis-py's, taken from
the client's pool: it connects (TCP, TLS or a unix socket, AUTH, SELECT, the protocol)
and its Retry decides what is tried again.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from contextlib import nullcontext
from typing import cast

from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from intake.adapters.redis_replies import read_replies


def _bulk(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def _pack(*words: bytes) -> bytes:
    """One command as Redis reads it (RESP): an array of bulk strings."""
    return b"*%d\r\n" % len(words) + b"".join([_bulk(word) for word in words])


class ScriptBatches:
    """Runs one round trip at a time (the limiter's Coalescer sends one batch at a time):
    its connection is never shared."""

    def __init__(self, client: Redis, source: str) -> None:
        self._pool = client.connection_pool
        self._connection: AbstractConnection | None = None
        self._busy = False
        script = source.encode()
        # What Redis names the script by: the SHA-1 of the bytes it is sent as.
        sha = hashlib.sha1(script, usedforsecurity=False).hexdigest().encode()
        self._load = _pack(b"SCRIPT", b"LOAD", script)
        self._head = _bulk(b"EVALSHA") + _bulk(sha)

    def command(self, keys: Sequence[bytes], args: Sequence[bytes]) -> bytes:
        """One call of the script, packed: what `run` sends."""
        words = [b"$%d\r\n%s\r\n" % (len(word), word) for word in keys]
        words += [b"$%d\r\n%s\r\n" % (len(word), word) for word in args]
        count = b"%d" % len(keys)
        return b"*%d\r\n%s$%d\r\n%s\r\n%s" % (
            len(words) + 3,
            self._head,
            len(count),
            count,
            b"".join(words),
        )

    async def run(self, commands: Sequence[bytes]) -> list[object]:
        """Each call's reply, in order, or the ResponseError Redis answered that call
        with (out of memory, a read-only replica). A broken connection or a timeout
        raises: the round trip's replies are lost together."""
        if self._busy:
            raise RuntimeError("one round trip at a time on a batch's connection")
        self._busy = True
        try:
            replies = await self._round_trip(b"".join(commands), len(commands))
            unknown = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
            if unknown:
                # Redis runs the commands in order: the calls find the script loaded.
                data = self._load + b"".join([commands[i] for i in unknown])
                again = await self._round_trip(data, len(unknown) + 1)
                for i, reply in zip(unknown, again[1:], strict=True):
                    replies[i] = reply
            return replies
        finally:
            self._busy = False

    async def _round_trip(self, data: bytes, count: int) -> list[object]:
        connection = self._connection
        if connection is None:
            # Out of the pool for good (the client's close still closes it), connected.
            connection = await self._pool.get_connection()  # type: ignore[no-untyped-call]
            self._connection = connection
        elif not connection.is_connected or await connection.can_read():
            # Disconnected by a failed round trip, or closed by Redis while idle (a
            # restart), or holding bytes no call asked for: connected again before
            # sending, as the pool would, so that the Retry is left for a connection
            # that breaks under the round trip.
            await connection.disconnect()
            await connection.connect()  # type: ignore[no-untyped-call]
        # A broken connection is disconnected and the round trip sent again on a new
        # one, as far as the connection's Retry says (as a pipeline's execute does).
        return cast(
            list[object],
            await connection.retry.call_with_retry(
                lambda: _exchange(connection, data, count),
                lambda _: connection.disconnect(),
            ),
        )


async def _exchange(connection: AbstractConnection, data: bytes, count: int) -> list[object]:
    """Writes `data` and reads `count` replies, all within the connection's socket
    timeout. A connection left with replies unread is disconnected: the next round trip
    would read them as its own."""
    if not connection.is_connected:  # disconnected by the Retry
        await connection.connect()  # type: ignore[no-untyped-call]
    # Private to redis-py (its own parser reads them too): the connected streams.
    reader, writer = connection._reader, connection._writer
    if reader is None or writer is None:
        raise RedisConnectionError(f"not connected to {connection}")
    timeout = connection.socket_timeout
    try:
        async with asyncio.timeout(timeout) if timeout else nullcontext():
            writer.write(data)
            await writer.drain()
            return await read_replies(reader, count)
    except BaseException as error:
        await connection.disconnect(nowait=True)
        if isinstance(error, TimeoutError):
            raise RedisTimeoutError(f"Timeout reading from {connection}") from None
        if isinstance(error, OSError):
            raise RedisConnectionError(f"Error talking to {connection}: {error}") from error
        raise
