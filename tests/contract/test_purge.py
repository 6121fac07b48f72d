"""Housekeeping: a purge deletes expired idempotency records and outbox rows published
long enough ago, in batches, and never an unpublished row."""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import dict_row

from intake.adapters.postgres import PostgresStore, open_postgres_store
from intake.adapters.postgres.dialect import PURGE as PG_PURGE
from intake.adapters.sql_statements import for_psycopg
from intake.adapters.sqlite import SqliteStore, open_sqlite_store
from intake.adapters.sqlite.dialect import PURGE as LITE_PURGE
from intake.adapters.sqlite.mapping import time_text
from intake.domain.idempotency import RETENTION, IdempotencyRecord
from intake.domain.model import Submission
from intake.ports.store import Store
from intake.ports.submissions import Committed, PurgeCounts
from tests.contract.builders import T0, event_for, plan, seed, stored, submission
from tests.contract.conftest import database_url

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(days=30)
WEEK = timedelta(days=7)
SCOPE = "public:frm_1"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


# The outbox is written by commits and marked published by the relay, which is still to
# come: until it does, the tests mark rows published under the port, in each store's own
# terms.


async def mark_published(store: Store, event_id: str, when: datetime) -> None:
    if isinstance(store, SqliteStore):

        def update(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE outbox SET published_at = ? WHERE event_id = ?",
                (time_text(when), event_id),
            )

        await store._worker.run(update)
    elif isinstance(store, PostgresStore):
        await store._db.execute(
            "UPDATE outbox SET published_at = %s WHERE event_id = %s", (when, event_id)
        )
    else:
        raise TypeError(f"no way to mark a row published in {store!r}")


async def committed(store: Store, *subs: Submission) -> list[str]:
    """Commits each submission; the event ids of their outbox rows."""
    for sub in subs:
        await store.submissions.commit(plan(sub))
    return [event_for(sub).event_id for sub in subs]


async def published(store: Store, n: int, when: datetime) -> str:
    """The n-th submission committed and its event published at `when`; the event id."""
    [event_id] = await committed(store, submission(n))
    await mark_published(store, event_id, when)
    return event_id


def key_record(key: str, created_at: datetime) -> IdempotencyRecord:
    return IdempotencyRecord(SCOPE, key, "f" * 64, f"sub_{key}", created_at)


async def claimed(store: Store, key: str, created_at: datetime) -> IdempotencyRecord:
    held = key_record(key, created_at)
    assert await store.submissions.claim_key(held) is None
    return held


async def kept_keys(store: Store, *keys: str) -> list[str]:
    """Those of `keys` whose record is still stored, expired or not."""
    return [key for key in keys if await store.submissions.find_idempotency(SCOPE, key, EPOCH)]


async def outbox_ids(store: Store) -> list[str]:
    return [row.event.event_id for row in await store.submissions.outbox(limit=1_000)]


# Idempotency records


async def test_records_24_hours_old_or_older_are_deleted_and_younger_ones_kept(
    store: Store,
) -> None:
    ages = {
        "ancient": timedelta(days=400),
        "a-day-and-an-hour": RETENTION + timedelta(hours=1),
        "exactly-24h": RETENTION,
        "a-microsecond-short": RETENTION - MICROSECOND,
        "an-hour": timedelta(hours=1),
        "just-now": timedelta(0),
    }
    records = [await claimed(store, key, NOW - age) for key, age in ages.items()]

    counts = await store.submissions.purge(NOW, WEEK)

    # The store's rule is the domain's: what IdempotencyRecord.expired says is gone.
    live = [r.key for r in records if not r.expired(NOW)]
    assert live == ["a-microsecond-short", "an-hour", "just-now"]
    assert counts == PurgeCounts(idempotency=3, outbox=0)
    assert await kept_keys(store, *ages) == live


async def test_a_purged_key_is_free_again(store: Store) -> None:
    await claimed(store, "k", NOW - RETENTION)
    await store.submissions.purge(NOW, WEEK)

    assert await store.submissions.claim_key(key_record("k", NOW)) is None
    assert await kept_keys(store, "k") == ["k"]


async def test_a_committed_submission_outlives_its_purged_key(store: Store) -> None:
    await seed(store)
    sub = submission(1, created_at=NOW - RETENTION)
    await store.submissions.commit(
        plan(sub, idempotency=key_record("k", sub.created_at)),
    )

    counts = await store.submissions.purge(NOW, WEEK)

    assert counts == PurgeCounts(idempotency=1, outbox=0)
    assert await stored(store) == [sub]
    assert await outbox_ids(store) == [event_for(sub).event_id]  # not published yet


# Outbox rows


async def test_rows_published_past_the_retention_are_deleted_and_recent_ones_kept(
    store: Store,
) -> None:
    await seed(store)
    old = await published(store, 1, NOW - WEEK - timedelta(days=30))
    at_the_edge = await published(store, 2, NOW - WEEK)
    recent = await published(store, 3, NOW - WEEK + MICROSECOND)
    just_now = await published(store, 4, NOW)

    counts = await store.submissions.purge(NOW, WEEK)

    assert counts == PurgeCounts(idempotency=0, outbox=2)
    kept = await outbox_ids(store)
    assert old not in kept
    assert at_the_edge not in kept
    assert kept == [recent, just_now]


async def test_an_unpublished_row_is_never_deleted_whatever_its_age(store: Store) -> None:
    await seed(store)
    ancient = submission(1, created_at=NOW - timedelta(days=3650))
    ids = await committed(store, ancient, submission(2))
    gone = await published(store, 3, NOW - timedelta(days=3650))

    # Not even with no retention at all, from far in the future.
    counts = await store.submissions.purge(NOW + timedelta(days=36500), timedelta(0))

    assert counts == PurgeCounts(idempotency=0, outbox=1)
    assert await outbox_ids(store) == ids
    assert gone not in ids


async def test_no_retention_deletes_every_published_row(store: Store) -> None:
    await seed(store)
    ids = [await published(store, n, NOW - timedelta(seconds=n)) for n in range(3)]
    [waiting] = await committed(store, submission(3))

    counts = await store.submissions.purge(NOW, timedelta(0))

    assert counts == PurgeCounts(idempotency=0, outbox=3)
    assert await outbox_ids(store) == [waiting]
    assert not set(ids) & set(await outbox_ids(store))


# Batches, concurrency, nothing to do


@pytest.mark.parametrize("batch_size", [1, 3, 5, 10, 11])
async def test_every_batch_is_deleted_until_none_is_left(store: Store, batch_size: int) -> None:
    await seed(store)
    for n in range(10):
        await claimed(store, f"old-{n}", NOW - RETENTION - timedelta(seconds=n))
        await published(store, n, NOW - WEEK - timedelta(seconds=n))
    await claimed(store, "live", NOW)
    [waiting] = await committed(store, submission(99))

    counts = await store.submissions.purge(NOW, WEEK, batch_size=batch_size)

    assert counts == PurgeCounts(idempotency=10, outbox=10)
    assert await kept_keys(store, "live", *(f"old-{n}" for n in range(10))) == ["live"]
    assert await outbox_ids(store) == [waiting]


async def test_two_purges_at_once_both_succeed_and_count_each_row_once(store: Store) -> None:
    await seed(store)
    for n in range(40):
        await claimed(store, f"old-{n}", NOW - RETENTION - timedelta(seconds=n))
        await published(store, n, NOW - WEEK - timedelta(seconds=n))
    [waiting] = await committed(store, submission(99))

    one, two = await asyncio.gather(
        store.submissions.purge(NOW, WEEK, batch_size=3),
        store.submissions.purge(NOW, WEEK, batch_size=3),
    )

    assert one.idempotency + two.idempotency == 40
    assert one.outbox + two.outbox == 40
    assert await kept_keys(store, *(f"old-{n}" for n in range(40))) == []
    assert await outbox_ids(store) == [waiting]


async def test_a_purge_alongside_commits_never_deletes_a_fresh_record(store: Store) -> None:
    # Each commit reuses an expired key, replacing its record, while the purge deletes
    # expired ones: whichever comes first, the commit succeeds and its record stays.
    await seed(store)
    keys = [f"reused-{n}" for n in range(20)]
    for key in keys:
        await claimed(store, key, NOW - RETENTION - timedelta(hours=1))
    subs = [submission(n, created_at=NOW) for n in range(20)]

    results, counts = await asyncio.gather(
        asyncio.gather(
            *(
                store.submissions.commit(plan(sub, idempotency=key_record(key, NOW)))
                for sub, key in zip(subs, keys, strict=True)
            )
        ),
        store.submissions.purge(NOW, WEEK, batch_size=2),
    )

    assert results == [Committed()] * 20
    assert 0 <= counts.idempotency <= 20
    for key in keys:
        held = await store.submissions.find_idempotency(SCOPE, key, NOW - RETENTION)
        assert held == key_record(key, NOW)
    assert await stored(store) == subs


async def test_a_purge_of_an_empty_store_deletes_nothing(store: Store) -> None:
    assert await store.submissions.purge(NOW, WEEK) == PurgeCounts(idempotency=0, outbox=0)


async def test_a_second_purge_finds_nothing_left(store: Store) -> None:
    await seed(store)
    await claimed(store, "old", NOW - RETENTION)
    await published(store, 1, NOW - WEEK)

    assert await store.submissions.purge(NOW, WEEK) == PurgeCounts(idempotency=1, outbox=1)
    assert await store.submissions.purge(NOW, WEEK) == PurgeCounts(idempotency=0, outbox=0)


@pytest.mark.parametrize(("retention", "batch_size"), [(WEEK, 0), (WEEK, -1), (-MICROSECOND, 10)])
async def test_a_bad_batch_size_or_retention_is_refused(
    store: Store, retention: timedelta, batch_size: int
) -> None:
    await claimed(store, "old", NOW - RETENTION)

    with pytest.raises(ValueError, match=r"batch_size|outbox_retention"):
        await store.submissions.purge(NOW, retention, batch_size=batch_size)
    assert await kept_keys(store, "old") == ["old"]


# The purge's queries read an index, not the table: the outbox and the keys grow all day.


async def test_sqlite_purges_by_index(tmp_path: Path) -> None:
    opened = await open_sqlite_store(f"sqlite:///{tmp_path / 'intake.db'}")
    await opened.close()

    with sqlite3.connect(tmp_path / "intake.db") as conn:
        for query in (LITE_PURGE.idempotency, LITE_PURGE.outbox):
            params = {"cutoff": time_text(NOW), "limit": 3}
            plan_rows = conn.execute(f"EXPLAIN QUERY PLAN {query}", params)
            details = [row[3] for row in plan_rows]
            assert not [d for d in details if d.startswith("SCAN")], details
            assert any(
                "USING COVERING INDEX idempotency_created" in d
                or "USING INDEX outbox_published" in d
                for d in details
            ), details


@pytest.fixture
def schema_url(postgres_url: str) -> Iterator[str]:
    """The session's database with a schema of its own first in the search path: its
    tables can be filled and analyzed without touching the other tests'."""
    schema = f"purge_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield database_url(postgres_url, options=f"-c search_path={schema}")
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.mark.services
async def test_postgres_purges_by_index(schema_url: str) -> None:
    opened = await open_postgres_store(schema_url)
    try:
        await opened.migrate()
    finally:
        await opened.close()

    async with await psycopg.AsyncConnection.connect(
        schema_url, autocommit=True, row_factory=dict_row
    ) as conn:
        # Tables of some size, analyzed, so that the planner chooses as in production:
        # on a few rows, reading the table whole is rightly cheapest.
        for statement in _FILL:
            await conn.execute(statement, {"now": NOW})
        await conn.execute("ANALYZE outbox, idempotency, deliveries")
        for query, indexes in (
            (PG_PURGE.idempotency, ["Index Scan using idempotency_created", "Tid Scan"]),
            # The deliveries' check is read by an index too (no Seq Scan): by event, or
            # the few pending and dead at once, as the planner finds cheaper.
            (PG_PURGE.outbox, ["Index Scan using outbox_published", "using outbox_pkey"]),
        ):
            statement = f"EXPLAIN {for_psycopg(query)}"
            cursor = await conn.execute(statement, {"cutoff": NOW, "limit": 5_000})
            plan_text = "\n".join(row["QUERY PLAN"] for row in await cursor.fetchall())
            assert "Seq Scan" not in plan_text, plan_text
            assert all(index in plan_text for index in indexes), plan_text


# 50,000 outbox rows, one in ten published long ago, each of those with a delivery, one
# in a hundred still pending (the rest delivered); 50,000 keys, half of them expired.
_FILL = (
    """
    INSERT INTO outbox (
        event_id, event_type, submission_id, form_id, workspace_id, payload, created_at,
        published_at, next_attempt_at
    )
    SELECT 'evt_' || g, 'submission.created', 'sub_' || g, 'frm_1', 'ws_1', '{}', %(now)s,
        CASE WHEN g %% 10 = 0 THEN %(now)s - interval '10 days' END, %(now)s
    FROM generate_series(1, 50000) AS g
    """,
    """
    INSERT INTO deliveries (
        delivery_id, event_id, kind, destination_id, state, attempts, next_attempt_at,
        delivered_at, created_at
    )
    SELECT 'dlv_' || g, 'evt_' || g, 'webhook', 'whk_1',
        CASE WHEN g %% 1000 = 0 THEN 'pending' ELSE 'delivered' END, 0,
        CASE WHEN g %% 1000 = 0 THEN %(now)s END,
        CASE WHEN g %% 1000 <> 0 THEN %(now)s - interval '10 days' END, %(now)s
    FROM generate_series(1, 50000) AS g
    WHERE g %% 10 = 0
    """,
    """
    INSERT INTO idempotency (scope, key, fingerprint, submission_id, created_at)
    SELECT 'public:frm_1', 'key-' || g, 'f', 'sub_' || g, %(now)s - (g %% 48) * interval '1 hour'
    FROM generate_series(1, 50000) AS g
    """,
)
