"""Redis replies are read as redis-py reads them, however the socket cuts them up."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.exceptions import (
    BusyLoadingError,
    ConnectionError,
    InvalidResponse,
    NoScriptError,
    OutOfMemoryError,
    ReadOnlyError,
    ResponseError,
)

from intake.adapters.redis_replies import read_replies

# A reply: None, bytes, an int, or a list of replies.
Reply = object

replies: st.SearchStrategy[Reply] = st.recursive(
    st.none() | st.binary(max_size=30) | st.integers(-(2**63), 2**63 - 1),
    lambda inner: st.lists(inner, max_size=5),
    max_leaves=12,
)


def encoded(reply: Reply) -> bytes:
    if reply is None:
        return b"$-1\r\n"
    if isinstance(reply, bytes):
        return b"$%d\r\n%s\r\n" % (len(reply), reply)
    if isinstance(reply, int):
        return b":%d\r\n" % reply
    assert isinstance(reply, list)
    return b"*%d\r\n" % len(reply) + b"".join(encoded(item) for item in reply)


def read(data: bytes, count: int, cuts: Sequence[int] = (), *, eof: bool = False) -> list[object]:
    """The replies read from `data`, arriving in pieces cut at `cuts`."""

    async def scenario() -> list[object]:
        reader = asyncio.StreamReader()
        edges = [0, *sorted(cuts), len(data)]

        async def arrive() -> None:
            for start, stop in itertools.pairwise(edges):
                reader.feed_data(data[start:stop])
                await asyncio.sleep(0)
            if eof:
                reader.feed_eof()

        feeding = asyncio.create_task(arrive())
        try:
            return await read_replies(reader, count)
        finally:
            await feeding

    return asyncio.run(scenario())


@given(st.lists(replies, min_size=1, max_size=6), st.data())
def test_replies_are_read_whole_wherever_the_bytes_are_cut(
    expected: list[Reply], data: st.DataObject
) -> None:
    raw = b"".join(encoded(reply) for reply in expected)
    cuts = data.draw(st.lists(st.integers(0, len(raw)), max_size=8))
    assert read(raw, len(expected), cuts) == expected


def test_simple_strings_and_resp3_nulls_are_read() -> None:
    assert read(b"+OK\r\n_\r\n*-1\r\n~1\r\n+a\r\n", 4) == [b"OK", None, None, [b"a"]]


def test_an_error_reply_is_the_error_redis_py_makes_of_it() -> None:
    raw = (
        b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
        b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
        b"-READONLY You can't write against a read only replica.\r\n"
        b"-ERR user_script:1: boom\r\n"
        b"*0\r\n"
    )
    got = read(raw, 5)
    assert [type(reply) for reply in got] == [
        NoScriptError,
        OutOfMemoryError,
        ReadOnlyError,
        ResponseError,
        list,
    ]
    assert str(got[0]) == "No matching script. Please use EVAL."
    assert str(got[3]) == "user_script:1: boom"


def test_an_error_redis_py_counts_as_a_broken_connection_is_raised() -> None:
    with pytest.raises(BusyLoadingError):
        read(b"*0\r\n-LOADING Redis is loading the dataset in memory\r\n", 2)


def test_a_connection_closed_before_the_last_reply_is_a_connection_error() -> None:
    with pytest.raises(ConnectionError):
        read(b"*0\r\n$5\r\nab", 2, eof=True)


def test_bytes_beyond_the_last_reply_or_of_no_reply_are_invalid() -> None:
    with pytest.raises(InvalidResponse):
        read(b"*0\r\n*0\r\n", 1)
    with pytest.raises(InvalidResponse):
        read(b"?what\r\n", 1)
