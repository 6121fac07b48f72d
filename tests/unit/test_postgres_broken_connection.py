"""A connection whose use failed as broken has the pool check its idle siblings: one
the driver marked broken, and one whose backend was terminated (SQLSTATE class 57P)
before the driver saw the close. Other errors leave the pool alone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import psycopg
import pytest

from intake.adapters.postgres.database import Database
from intake.domain.errors import StorageUnavailable


class _Connection:
    def __init__(self, broken: bool) -> None:
        self.broken = broken


class _Pool:
    def __init__(self, broken: bool) -> None:
        self.checks = 0
        self._broken = broken

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[_Connection]:
        yield _Connection(self._broken)

    async def check(self) -> None:
        self.checks += 1


def _checks_after(error: Exception, *, broken: bool) -> int:
    async def scenario() -> int:
        pool = _Pool(broken)
        db = Database(cast(Any, pool), "postgresql://unused")
        with pytest.raises(StorageUnavailable):
            async with db.connection():
                raise error
        return pool.checks

    return asyncio.run(scenario())


def test_a_terminated_backend_has_the_idle_connections_checked() -> None:
    assert _checks_after(psycopg.errors.AdminShutdown("terminating"), broken=False) == 1


def test_a_connection_the_driver_marked_broken_has_them_checked() -> None:
    assert _checks_after(psycopg.OperationalError("closed"), broken=True) == 1


def test_an_error_of_a_live_connection_leaves_the_pool_alone() -> None:
    assert _checks_after(psycopg.errors.QueryCanceled("timeout"), broken=False) == 0
