"""Natural batching: a lone call goes at once; calls made while a batch is in flight go
together in the next; every caller gets its own result, or its batch's error."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.adapters.coalescing import Coalescer

pytestmark = pytest.mark.anyio


class Recorder:
    """Doubles each item, one batch at a time, and keeps the batches it was given."""

    def __init__(self, fail_on: int | None = None) -> None:
        self.batches: list[list[int]] = []
        self.release = asyncio.Event()
        self.fail_on = fail_on

    async def run(self, items: Sequence[int]) -> list[int]:
        self.batches.append(list(items))
        await self.release.wait()
        if self.fail_on is not None and self.fail_on in items:
            raise ConnectionError("the server went away")
        return [item * 2 for item in items]


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_lone_call_goes_at_once() -> None:
    recorder = Recorder()
    recorder.release.set()
    assert await Coalescer(recorder.run).call(21) == 42
    assert recorder.batches == [[21]]


async def test_calls_made_during_a_batch_go_together_in_the_next() -> None:
    recorder = Recorder()
    coalescer = Coalescer(recorder.run)
    first = asyncio.ensure_future(coalescer.call(1))
    await _settle()
    queued = [asyncio.ensure_future(coalescer.call(n)) for n in (2, 3, 4)]
    await _settle()
    recorder.release.set()

    assert await first == 2
    assert [await q for q in queued] == [4, 6, 8]
    assert recorder.batches == [[1], [2, 3, 4]]


async def test_a_batch_holds_at_most_max_batch() -> None:
    recorder = Recorder()
    coalescer = Coalescer(recorder.run, max_batch=2)
    calls = [asyncio.ensure_future(coalescer.call(n)) for n in range(5)]
    await _settle()
    recorder.release.set()

    assert [await c for c in calls] == [0, 2, 4, 6, 8]
    assert recorder.batches == [[0, 1], [2, 3], [4]]


async def test_a_failed_batch_fails_each_of_its_calls_and_no_other() -> None:
    recorder = Recorder(fail_on=2)
    coalescer = Coalescer(recorder.run)
    first = asyncio.ensure_future(coalescer.call(1))
    await _settle()
    doomed = [asyncio.ensure_future(coalescer.call(n)) for n in (2, 3)]
    await _settle()
    recorder.release.set()

    assert await first == 2
    for call in doomed:
        with pytest.raises(ConnectionError):
            await call
    assert await coalescer.call(5) == 10  # the next batch goes as usual


async def test_a_caller_that_gives_up_leaves_the_others_their_results() -> None:
    recorder = Recorder()
    coalescer = Coalescer(recorder.run)
    calls = [asyncio.ensure_future(coalescer.call(n)) for n in (1, 2)]
    await _settle()
    calls[0].cancel()
    await _settle()
    recorder.release.set()

    assert await calls[1] == 4
    assert calls[0].cancelled()
    assert recorder.batches == [[1, 2]]  # its item still went out with the other


async def test_a_batch_answering_the_wrong_number_of_results_is_an_error() -> None:
    async def short(items: Sequence[int]) -> list[int]:
        return list(items)[1:]

    with pytest.raises(RuntimeError, match="answered"):
        await Coalescer(short).call(1)


@given(st.lists(st.integers(), max_size=40), st.integers(min_value=1, max_value=7))
def test_every_caller_gets_its_own_result_in_any_batching(items: list[int], size: int) -> None:
    async def scenario() -> tuple[list[int], list[list[int]]]:
        batches: list[list[int]] = []

        async def run(batch: Sequence[int]) -> list[int]:
            batches.append(list(batch))
            await asyncio.sleep(0)
            return [item + 1 for item in batch]

        coalescer = Coalescer(run, max_batch=size)
        results = await asyncio.gather(*(coalescer.call(item) for item in items))
        return list(results), batches

    results, batches = asyncio.run(scenario())
    assert results == [item + 1 for item in items]
    assert [item for batch in batches for item in batch] == items
    assert all(1 <= len(batch) <= size for batch in batches)


async def test_a_call_held_back_past_its_queue_timeout_is_withdrawn_unsent() -> None:
    recorder = Recorder()
    coalescer = Coalescer(recorder.run)
    stuck = asyncio.ensure_future(coalescer.call(1, queue_timeout=0.01))
    await _settle()
    behind = asyncio.ensure_future(coalescer.call(2, queue_timeout=0.01))
    kept = asyncio.ensure_future(coalescer.call(3))

    with pytest.raises(TimeoutError):
        await behind
    recorder.release.set()

    assert await stuck == 2  # sent before its time ran out: it gets its result
    assert await kept == 6
    assert recorder.batches == [[1], [3]]  # the withdrawn call never went out
