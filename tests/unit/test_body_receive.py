"""A body's receive within its deadline: a message already in is taken without arming
the deadline's timer, one that has to be waited for is waited for until the deadline."""

from __future__ import annotations

import asyncio

import pytest
from starlette.types import Message

from intake.entrypoints.http.submissions import _receive_within
from intake.service.messages import BodyDeadline

BODY: Message = {"type": "http.request", "body": b"a=b", "more_body": False}


async def _within(arrives_after: float | None, seconds: float) -> Message:
    """The message `_receive_within` takes from a receive whose message is in at once
    (None) or arrives after `arrives_after` seconds, with `seconds` allowed."""
    loop = asyncio.get_running_loop()
    ready = asyncio.Event()
    if arrives_after is None:
        ready.set()
    else:
        loop.call_later(arrives_after, ready.set)

    async def receive() -> Message:
        await ready.wait()
        return BODY

    return await _receive_within(receive, BodyDeadline(loop.time(), seconds))


def test_a_message_already_in_is_taken_even_past_the_deadline() -> None:
    assert asyncio.run(_within(None, 10)) == BODY
    assert asyncio.run(_within(None, -1)) == BODY  # as asyncio's timeout lets it through


def test_a_message_that_arrives_in_time_is_waited_for() -> None:
    assert asyncio.run(_within(0.01, 10)) == BODY


def test_a_message_still_awaited_at_the_deadline_is_given_up() -> None:
    with pytest.raises(TimeoutError):
        asyncio.run(_within(10, 0.01))


def test_a_cancel_from_elsewhere_reaches_the_receive_and_stays_a_cancel() -> None:
    cancelled = []

    async def main() -> None:
        loop = asyncio.get_running_loop()

        async def receive() -> Message:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                cancelled.append(True)
                raise
            return BODY

        task = asyncio.ensure_future(_receive_within(receive, BodyDeadline(loop.time(), 10)))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cancelled == [True]
