"""Delivery with what only PostgreSQL has: several relays at once, each in its own
process (here, its own store and pool), NOTIFY, and the planner."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import psycopg
import pytest
from psycopg.abc import Params
from psycopg.rows import dict_row

from intake.adapters import sql_statements as sql
from intake.adapters.postgres import PostgresStore
from intake.adapters.postgres import dialect as pg_dialect
from intake.adapters.sql_statements import for_psycopg
from tests.contract.builders import endpoint, form, seed
from tests.contract.conftest import PostgresBackend
from tests.contract.test_deliveries import (
    LEASE,
    NOW,
    OTHER_FORM,
    committed,
    deliveries,
    listening,
)

pytestmark = [pytest.mark.anyio, pytest.mark.services]


@pytest.fixture
def backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def store(backend: PostgresBackend) -> AsyncIterator[PostgresStore]:
    opened = await backend.open_postgres()
    try:
        await seed(opened, form(), form(OTHER_FORM, public_form_key="pk0form2"))
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def second(backend: PostgresBackend, store: PostgresStore) -> AsyncIterator[PostgresStore]:
    """Another store on the same database, as another relay process would have."""
    other = await backend.open_postgres()
    try:
        yield other
    finally:
        await other.close()


async def test_two_relays_fan_out_each_row_once(
    store: PostgresStore, second: PostgresStore
) -> None:
    await store.destinations.add_endpoint(endpoint())
    events = await committed(store, *range(40))

    taken = await asyncio.gather(
        *(each.deliveries.fan_out(NOW, 3) for each in [store, second] * 10 for _ in range(2))
    )
    taken += [await store.deliveries.fan_out(NOW, 100)]

    assert sum(taken) == len(events)
    assert sorted(d.event_id for d in (await deliveries(store)).values()) == sorted(events)


async def test_two_relays_never_lease_one_delivery_at_once(
    store: PostgresStore, second: PostgresStore
) -> None:
    await store.destinations.add_endpoint(endpoint("whk_a"))
    await store.destinations.add_endpoint(endpoint("whk_b"))
    await committed(store, *range(30))
    await store.deliveries.fan_out(NOW, 100)

    rounds = await asyncio.gather(
        *(each.deliveries.claim_due(NOW, LEASE, 4) for each in [store, second] * 12)
    )

    leased = [c.delivery.delivery_id for claimed in rounds for c in claimed.leased]
    assert len(leased) == len(set(leased))
    assert set(leased) == set(await deliveries(store))  # 60, all taken by someone
    assert (await store.deliveries.claim_due(NOW, LEASE, 100)).leased == []


async def test_a_commit_in_another_process_wakes_a_waiting_relay(
    store: PostgresStore, second: PostgresStore
) -> None:
    await listening(store)
    started = time.monotonic()

    async def commit_elsewhere() -> None:
        await asyncio.sleep(0.05)
        await committed(second, 1)

    await asyncio.gather(store.new_events.wait(30), commit_elsewhere())

    assert time.monotonic() - started < 10


async def test_closing_the_store_ends_a_wait_and_its_connection(
    backend: PostgresBackend,
) -> None:
    store = await backend.open_postgres()
    try:
        await listening(store)
        assert await _listeners(backend.url, expected=1) == 1
        started = time.monotonic()

        async def close_soon() -> None:
            await asyncio.sleep(0.05)
            await store.close()

        await asyncio.gather(store.new_events.wait(30), close_soon())
        assert time.monotonic() - started < 10
    finally:
        await store.close()
    assert await _listeners(backend.url, expected=0) == 0


async def test_a_cancelled_wait_leaves_the_listener_usable(
    store: PostgresStore, second: PostgresStore
) -> None:
    await listening(store)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await store.new_events.wait(30)

    await committed(second, 1)
    started = time.monotonic()
    await store.new_events.wait(30)

    assert time.monotonic() - started < 10


async def test_a_lost_listener_connection_is_replaced(
    store: PostgresStore, second: PostgresStore, backend: PostgresBackend
) -> None:
    await listening(store)
    await backend.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE application_name = 'intake-listen' AND datname = current_database()"
    )

    # The wait that finds its connection gone returns: look now. The next one listens
    # afresh (and returns at once, as a first wait does); then commits wake it again.
    started = time.monotonic()
    await store.new_events.wait(30)
    await store.new_events.wait(30)
    assert time.monotonic() - started < 10
    assert await _listeners(backend.url, expected=1) == 1

    await committed(second, 1)
    await store.new_events.wait(30)
    assert time.monotonic() - started < 20


async def _listeners(url: str, expected: int) -> int:
    """The listening connections on the database, once `expected` or after a second: a
    closed connection leaves the server's list a moment after. The server shows a
    session's LISTEN channels only to itself; the connection's name tells it."""
    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, row_factory=dict_row
    ) as conn:
        count = -1
        for _ in range(50):
            cursor = await conn.execute(
                "SELECT count(*) AS n FROM pg_stat_activity"
                " WHERE application_name = 'intake-listen' AND datname = current_database()"
            )
            row = await cursor.fetchone()
            assert row is not None
            count = int(row["n"])
            if count == expected:
                break
            await asyncio.sleep(0.02)
        return count


# The relay's queries read indexes


PG_QUERIES: dict[str, tuple[str, Params]] = {
    "fan_out": (for_psycopg(pg_dialect.DELIVERIES.fan_out.unpublished), {"limit": 100}),
    "claim_due": (
        for_psycopg(pg_dialect._CLAIM),
        {
            "now": NOW,
            "leased_until": NOW + LEASE,
            "limit": 100,
            "endpoint_removed": "r",
            "endpoint_disabled": "d",
            "recipient_removed": "rr",
            "chat_removed": "cr",
        },
    ),
    "list_dead": (for_psycopg(sql.LIST_DEAD), (100,)),
    "retry_dead": (for_psycopg(sql.RETRY_DEAD), (NOW, "evt_1")),
}


@pytest.mark.parametrize("name", list(PG_QUERIES))
async def test_relay_queries_read_an_index(
    store: PostgresStore, backend: PostgresBackend, name: str
) -> None:
    text, params = PG_QUERIES[name]
    async with await psycopg.AsyncConnection.connect(backend.url, autocommit=True) as conn:
        # Near-empty tables: without these a sequential scan, or a bitmap of a few rows
        # then sorted, is rightly cheaper.
        await conn.execute("SET enable_seqscan = off")
        await conn.execute("SET enable_bitmapscan = off")
        cursor = await conn.execute("EXPLAIN (FORMAT JSON) " + text, params)
        row = await cursor.fetchone()
    assert row is not None

    nodes = list(_plan_nodes(row[0][0]["Plan"]))
    scans = [(n["Relation Name"], n["Node Type"]) for n in nodes if "Relation Name" in n]

    assert not [scan for scan in scans if scan[1] == "Seq Scan"], scans
    if name != "claim_due":  # the claim sorts its few leased rows, once more, at the end
        assert "Sort" not in [n["Node Type"] for n in nodes], nodes


def _plan_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)
