"""Redis's replies (RESP2 and the RESP3 types a script call or SCRIPT LOAD answers with),
read as redis-py reads them with decoding off: bulk and simple strings as bytes, integers
as int, nil as None, arrays as lists, an error as the ResponseError subclass redis-py
makes of it (NoScriptError, OutOfMemoryError, ReadOnlyError...).

Parsed from the bytes at hand, so that a batch of replies costs one read from the socket
or a few, not one await per line as redis-py's own parser spends.
"""

from __future__ import annotations

import asyncio

from redis._parsers import BaseParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse

_CHUNK = 65536


class _IncompleteError(Exception):
    """The bytes at hand end inside a reply: more are to come."""


async def read_replies(reader: asyncio.StreamReader, count: int) -> list[object]:
    """The next `count` replies on `reader`. Raises ConnectionError when Redis closes the
    connection first, InvalidResponse on bytes that are no reply or on bytes beyond the
    last reply (the connection is then out of step), and raises at once an error reply
    redis-py counts as a ConnectionError (LOADING, too many clients)."""
    replies: list[object] = []
    data = b""
    pos = 0
    while True:
        chunk = await reader.read(_CHUNK)
        if not chunk:
            raise RedisConnectionError("Connection closed by server.")
        data = data[pos:] + chunk if pos < len(data) else chunk
        pos = 0
        try:
            while len(replies) < count:
                reply, pos = parse(data, pos)
                replies.append(reply)
        except _IncompleteError:
            continue
        if pos != len(data):
            raise InvalidResponse(f"bytes beyond the last reply: {data[pos : pos + 40]!r}")
        return replies


def parse(data: bytes, pos: int) -> tuple[object, int]:
    """The reply starting at `pos` and the position after it; _IncompleteError if `data` ends
    first."""
    end = data.find(b"\r\n", pos)
    if end < 0:
        raise _IncompleteError
    kind = data[pos]
    line = data[pos + 1 : end]
    pos = end + 2
    if kind in {42, 126}:  # '*' array, '~' set
        if line == b"-1":
            return None, pos
        items: list[object] = []
        for _ in range(int(line)):
            item, pos = parse(data, pos)
            items.append(item)
        return items, pos
    if kind == 36:  # '$' bulk string
        if line == b"-1":
            return None, pos
        stop = pos + int(line)
        if len(data) < stop + 2:
            raise _IncompleteError
        return data[pos:stop], stop + 2
    if kind == 58:  # ':' integer
        return int(line), pos
    if kind == 43:  # '+' simple string
        return line, pos
    if kind == 45:  # '-' error
        text = line.decode("utf-8", errors="replace")
        error = BaseParser.parse_error(text)  # type: ignore[no-untyped-call]
        if isinstance(error, RedisConnectionError):
            raise error
        return error, pos
    if kind == 95 and not line:  # '_' RESP3 null
        return None, pos
    raise InvalidResponse(f"Protocol Error: {data[pos - len(line) - 3 : pos]!r}")
