"""Natural batching: calls that arrive while a round trip is in flight go together in the
next one.

A call finding nothing in flight starts a batch of its own at once, so a lone request
waits for nothing; under load, each round trip carries whatever queued up behind the
previous one (at most `max_batch`). One round trip for many calls is less work for the
worker (one write, one wake-up, one parse of the answer) and, for a store, one
transaction and one flush to disk for the lot.

The batches run in a task of their own: a caller that gives up (its client went away)
stops waiting, but its item still goes out with the others, as a call already sent would
have. A batch that fails fails each of its calls with the same error. A call may bound
its wait for a batch that hangs (`queue_timeout`): withdrawn before it was sent, it fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# One batch: the items, in the order they came, to their results in the same order.
BatchRunner = Callable[[Sequence[Item]], Awaitable[Sequence[Result]]]


class Coalescer(Generic[Item, Result]):
    def __init__(self, run: BatchRunner[Item, Result], max_batch: int = 64) -> None:
        if max_batch < 1:
            raise ValueError("a batch holds at least one item")
        self._run = run
        self._max_batch = max_batch
        self._queue: list[tuple[Item, asyncio.Future[Result]]] = []
        self._draining: asyncio.Task[None] | None = None

    async def call(self, item: Item, *, queue_timeout: float | None = None) -> Result:
        """`item`'s result. With `queue_timeout`: TimeoutError if a batch in flight held
        it back that long (a stuck round trip), before it was sent, so it was not."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        entry = (item, future)
        self._queue.append(entry)
        if self._draining is None:
            self._draining = asyncio.create_task(self._drain())
        if queue_timeout is not None:
            withdrawal = loop.call_later(queue_timeout, self._withdraw, entry)
            future.add_done_callback(lambda _: withdrawal.cancel())
        return await future

    def _withdraw(self, entry: tuple[Item, asyncio.Future[Result]]) -> None:
        for index, queued in enumerate(self._queue):
            if queued is entry:  # not sent yet: it never will be
                del self._queue[index]
                if not entry[1].done():
                    entry[1].set_exception(TimeoutError("held back by a batch in flight"))
                return

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch = self._queue[: self._max_batch]
                del self._queue[: self._max_batch]
                await self._settle(batch)
        except BaseException:
            # Stopped (the loop is closing): whoever still waits hears so, at once.
            left, self._queue = self._queue, []
            for _, future in left:
                if not future.done():
                    future.set_exception(RuntimeError("the batching stopped"))
            raise
        finally:
            self._draining = None

    async def _settle(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            results = await self._run([item for item, _ in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"a batch of {len(batch)} answered {len(results)} results")
        except BaseException as error:  # handed to every caller of the batch
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            if not isinstance(error, Exception):
                raise  # cancellation or exit: the drain stops here
            return
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)
