"""The httptools protocol's transport: what is written in one turn of the event loop goes
out in one write (uvicorn writes an answer's head and body apart), in order, and closing
sends what waits first."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from intake.entrypoints.http.httptools_protocol import _WritesTogether

pytestmark = pytest.mark.anyio


class _Transport:
    def __init__(self) -> None:
        self.calls: list[Any] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.calls.append(data)

    def close(self) -> None:
        self.calls.append("close")
        self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


def _wrapped(loop: asyncio.AbstractEventLoop) -> tuple[_Transport, _WritesTogether]:
    raw = _Transport()
    return raw, _WritesTogether(cast(asyncio.Transport, raw), loop)


async def test_writes_of_one_turn_go_out_in_one_write_at_its_end() -> None:
    raw, transport = _wrapped(asyncio.get_running_loop())

    transport.write(b"HTTP/1.1 201 Created\r\n\r\n")
    transport.write(b"{}")
    assert raw.calls == []
    await asyncio.sleep(0)

    assert raw.calls == [b"HTTP/1.1 201 Created\r\n\r\n{}"]


async def test_closing_sends_what_waits_first() -> None:
    raw, transport = _wrapped(asyncio.get_running_loop())

    transport.write(b"answer")
    transport.close()
    await asyncio.sleep(0)

    assert raw.calls == [b"answer", "close"]


async def test_a_connection_closed_meanwhile_takes_nothing_more() -> None:
    raw, transport = _wrapped(asyncio.get_running_loop())

    transport.write(b"late")
    raw.closing = True
    await asyncio.sleep(0)

    assert raw.calls == []
    assert transport.get_extra_info("peername") == "info:peername"
