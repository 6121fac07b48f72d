"""Many calls of one Lua script in one round trip to Redis: a pipeline without MULTI of
EVALSHA calls. Redis runs each call on its own, atomically, one after the other, and
answers each with its own reply, so a call decides exactly as if it had gone alone.

redis-py's Script objects, run in a pipeline, ask SCRIPT EXISTS before every execute: a
round trip more each time. Here the pipeline goes at once (a lone call as a plain
EVALSHA, which costs the worker less than a pipeline), and only when Redis has lost
its script cache (a restart, SCRIPT FLUSH) do the calls it answered NOSCRIPT go again,
behind a SCRIPT LOAD, in one more round trip. A call answered NOSCRIPT ran nothing, so
sending it again counts nothing twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from redis.asyncio import Redis
from redis.exceptions import NoScriptError, ResponseError

# One call: its keys and its arguments.
ScriptCall = tuple[Sequence[str | bytes], Sequence[str | bytes | int]]


class ScriptBatches:
    def __init__(self, client: Redis, source: str) -> None:
        self._client = client
        self._source = source
        # What Redis names the script by: the SHA-1 of the bytes it is sent as.
        self._sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()

    async def run(self, calls: Sequence[ScriptCall]) -> list[object]:
        """Each call's reply, in order, or the ResponseError Redis answered that call
        with (out of memory, a read-only replica). A broken connection or a timeout
        raises: the round trip's replies are lost together."""
        replies = await self._first_try(calls)
        unknown = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
        if unknown:
            again = await self._send([calls[i] for i in unknown], load=True)
            for i, reply in zip(unknown, again, strict=True):
                replies[i] = reply
        return replies

    async def _first_try(self, calls: Sequence[ScriptCall]) -> list[object]:
        if len(calls) > 1:
            return await self._send(calls, load=False)
        keys, args = calls[0]
        try:
            return [await self._client.evalsha(self._sha, len(keys), *keys, *args)]
        except ResponseError as error:  # NOSCRIPT among them, as a pipeline would answer
            return [error]

    async def _send(self, calls: Sequence[ScriptCall], *, load: bool) -> list[object]:
        pipeline = self._client.pipeline(transaction=False)
        if load:
            # Redis runs a pipeline's commands in order: the calls find it loaded.
            pipeline.script_load(self._source)
        for keys, args in calls:
            pipeline.evalsha(self._sha, len(keys), *keys, *args)
        replies: list[object] = await pipeline.execute(raise_on_error=False)
        return replies[1:] if load else replies
