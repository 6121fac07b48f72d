"""A batch of script calls answers each call as a redis-py pipeline of EVALSHA calls
(with SCRIPT LOAD and a second round trip for the calls answered NOSCRIPT) answers it:
the same values, the same errors, over either protocol.

The test has a private redis-server (tests/support/instances.py): it flushes the script
cache."""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis
from redis.exceptions import NoScriptError, OutOfMemoryError, ReadOnlyError, ResponseError

from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.ratelimit_redis import RedisRateLimiter
from intake.adapters.redis_script_batch import ScriptBatches
from intake.domain.ratelimit import RateDecision, RateRule, Window
from intake.ports.rate_limiter import RateLimiter
from tests.support.instances import RedisInstance, private_redis

pytestmark = pytest.mark.slow

# Each call's first argument picks its reply: each kind of value and of error reply.
SCRIPT = """
local kind = ARGV[1]
if kind == 'oom' then
    return redis.error_reply('OOM command not allowed when used memory > maxmemory')
elseif kind == 'readonly' then
    return redis.error_reply("READONLY You can't write against a read only replica.")
elseif kind == 'error' then
    redis.call('SET', KEYS[1], 'text')
    return redis.call('INCR', KEYS[1])
elseif kind == 'nil' then
    return nil
elseif kind == 'number' then
    return #ARGV
elseif kind == 'status' then
    return redis.status_reply('FINE')
elseif kind == 'empty' then
    return {}
end
redis.call('SET', KEYS[1], kind)
return {KEYS[1], ARGV[2], {kind, ''}}
"""
KINDS = ["oom", "readonly", "error", "nil", "number", "status", "empty", "hit", "other"]

Call = tuple[list[bytes], list[bytes]]


@pytest.fixture(scope="module")
def server() -> Iterator[RedisInstance]:
    with private_redis() as instance:
        yield instance


async def through_a_pipeline(client: Redis, calls: Sequence[Call]) -> list[object]:
    """What a pipeline of EVALSHA calls answers, sent again behind SCRIPT LOAD where it
    answered NOSCRIPT."""
    sha = hashlib.sha1(SCRIPT.encode(), usedforsecurity=False).hexdigest()
    pipeline = client.pipeline(transaction=False)
    for keys, args in calls:
        pipeline.evalsha(sha, len(keys), *keys, *args)
    replies: list[object] = await pipeline.execute(raise_on_error=False)
    unknown = [i for i, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
    if unknown:
        pipeline.script_load(SCRIPT)
        for i in unknown:
            keys, args = calls[i]
            pipeline.evalsha(sha, len(keys), *keys, *args)
        again = await pipeline.execute(raise_on_error=False)
        for i, reply in zip(unknown, again[1:], strict=True):
            replies[i] = reply
    return replies


def comparable(reply: object) -> object:
    """An error by its kind and message, as the limiter maps it; a value as it is."""
    if isinstance(reply, ResponseError):
        return (type(reply), str(reply))
    return reply


def answers(url: str, protocol: int, calls: list[Call], flush: bool) -> tuple[list[object], ...]:
    async def scenario() -> tuple[list[object], ...]:
        client = Redis.from_url(url, socket_timeout=5, protocol=protocol)
        try:
            batches = ScriptBatches(client, SCRIPT)
            if flush:
                await client.script_flush()
            old = await through_a_pipeline(client, calls)
            if flush:
                await client.script_flush()
            new = await batches.run([batches.command(keys, args) for keys, args in calls])
            return [comparable(r) for r in old], [comparable(r) for r in new]
        finally:
            await client.aclose()

    return asyncio.run(scenario())


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.sampled_from(KINDS), min_size=1, max_size=12),
    st.booleans(),
    st.sampled_from([2, 3]),
)
def test_each_call_gets_the_reply_a_pipeline_gives_it(
    server: RedisInstance, kinds: list[str], flush: bool, protocol: int
) -> None:
    calls: list[Call] = [
        ([b"k:%d" % i], [kind.encode(), b"member %d" % i]) for i, kind in enumerate(kinds)
    ]
    old, new = answers(server.url, protocol, calls, flush)
    assert new == old


def test_mixed_replies_after_a_lost_script_cache() -> None:
    """The example the property covers: ok, NOSCRIPT then ok, and per-call errors."""
    with private_redis() as server:
        calls: list[Call] = [
            ([b"a"], [b"hit", b"m"]),
            ([b"b"], [b"oom", b"m"]),
            ([b"c"], [b"readonly", b"m"]),
            ([b"d"], [b"error", b"m"]),
            ([b"e"], [b"empty", b"m"]),
        ]
        old, new = answers(server.url, 3, calls, flush=True)
    assert new == old
    assert new[0] == [b"a", b"m", [b"hit", b""]]
    errors = [reply[0] for reply in new[1:4]]  # type: ignore[index]
    assert errors == [OutOfMemoryError, ReadOnlyError, ResponseError]
    assert new[4] == []


def test_a_connection_holding_bytes_no_call_asked_for_is_connected_again(
    server: RedisInstance,
) -> None:
    async def scenario() -> list[object]:
        client = Redis.from_url(server.url, socket_timeout=5)
        try:
            batches = ScriptBatches(client, SCRIPT)
            call = batches.command([b"k"], [b"number", b"x"])
            assert await batches.run([call]) == [2]
            connection = batches._connection
            assert connection is not None
            connection._reader.feed_data(b":666\r\n")  # type: ignore[union-attr]
            return await batches.run([call])
        finally:
            await client.aclose()

    assert asyncio.run(scenario()) == [2]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.floats(1_500_000_000, 2_500_000_000).map(lambda t: round(t, 6)),
    st.sampled_from([1, 30, 600, 86_400]),
)
def test_a_hit_leaves_its_window_at_the_very_float_the_in_process_limiter_says(
    server: RedisInstance, first: float, seconds: int
) -> None:
    """The script computes the window's edge itself (now minus the window): at the
    instants whose edge falls on the first hit, or one step of the float either side,
    Redis decides as the in-process limiter does."""
    edge = first + seconds
    instants = [math.nextafter(edge, 0), edge, math.nextafter(edge, math.inf)]
    one = [Window("{form}:ip", RateRule(1, seconds))]

    async def decisions(limiter: RateLimiter) -> list[RateDecision]:
        answers = []
        for instant in instants:
            await limiter.hit(one, first)
            answers.append(await limiter.hit(one, instant))
        return answers

    async def scenario() -> tuple[list[RateDecision], list[RateDecision]]:
        client = Redis.from_url(server.url, socket_timeout=5)
        try:
            await client.flushall()
            shared = await decisions(RedisRateLimiter(client, "edge:"))
        finally:
            await client.aclose()
        return shared, await decisions(InProcessRateLimiter())

    shared, in_process = asyncio.run(scenario())
    assert shared == in_process
