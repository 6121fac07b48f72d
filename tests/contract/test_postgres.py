"""What only the PostgreSQL store has: a server, a pool, migrations run as a deployment
step, several processes committing at once, connections that die."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from attrs import evolve
from psycopg import sql
from psycopg.rows import dict_row

from intake.adapters import sql_statements as shared
from intake.adapters.postgres import PostgresStore, open_postgres_store
from intake.adapters.postgres import dialect as pg_dialect
from intake.adapters.postgres import migrations as pg_migrations
from intake.adapters.postgres import store as pg_store
from intake.adapters.postgres.commit_batch import SINGLE
from intake.adapters.postgres.mapping import commit_params, moment
from intake.adapters.postgres.migrations import MIGRATIONS, REPEATABLES
from intake.adapters.sql_migrations import Repeatable
from intake.adapters.sql_statements import for_psycopg
from intake.adapters.submission_pages import page_statement
from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import RETENTION
from intake.domain.listing import SubmissionFilter, SubmissionQuery
from intake.domain.model import FieldData, SubmissionStatus
from intake.ports.submissions import Committed, IdempotencyTaken, QuotaReached
from tests.contract.builders import (
    FORM_ID,
    PERIOD,
    WORKSPACE_ID,
    form,
    plan,
    quota,
    record,
    seed,
    stored,
    submission,
    workspace,
)
from tests.contract.conftest import PostgresBackend, database_url
from tests.contract.old_schemas import postgres_before, postgres_from_on

pytestmark = [pytest.mark.anyio, pytest.mark.services]

MIGRATION_NAMES = [m.name for m in MIGRATIONS] + [r.name for r in REPEATABLES]


@pytest.fixture
def backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def store(backend: PostgresBackend) -> AsyncIterator[PostgresStore]:
    opened = await backend.open_postgres()
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def empty_url(postgres_url: str) -> Iterator[str]:
    """A URL whose search_path is a new empty schema: a database never migrated, made
    and dropped far faster than a database."""
    schema = f"empty_{secrets.token_hex(6)}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield database_url(postgres_url, options=f"-c search_path={schema}")
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


async def query(url: str, text: str, *params: object) -> list[dict[str, Any]]:
    """Runs SQL over a connection of its own, as another process would."""
    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, row_factory=dict_row
    ) as conn:
        cursor = await conn.execute(text, params or None)
        return await cursor.fetchall() if cursor.description else []


# Migrations


async def test_an_unmigrated_database_opens_but_says_to_run_intake_migrate(
    empty_url: str,
) -> None:
    opened = await open_postgres_store(empty_url)
    try:
        with pytest.raises(StorageUnavailable, match="intake migrate"):
            await opened.ping()
        with pytest.raises(StorageUnavailable, match="intake migrate"):
            await opened.forms.resolve_public_key("pk")

        assert await opened.migrate() == MIGRATION_NAMES
        assert await opened.migrate() == []
        await opened.ping()
        assert await opened.forms.resolve_public_key("pk") is None
    finally:
        await opened.close()


async def test_migrations_are_recorded_in_the_ledger(empty_url: str) -> None:
    opened = await open_postgres_store(empty_url)
    try:
        await opened.migrate()
    finally:
        await opened.close()

    rows = await query(empty_url, "SELECT version, name, applied_at FROM schema_migrations")

    assert [(r["version"], r["name"]) for r in rows] == [(m.version, m.name) for m in MIGRATIONS]
    assert all(r["applied_at"].tzinfo is not None for r in rows)


async def test_two_processes_migrating_at_once_apply_each_migration_once(
    empty_url: str,
) -> None:
    one = await open_postgres_store(empty_url)
    two = await open_postgres_store(empty_url)
    try:
        results = await asyncio.gather(one.migrate(), two.migrate())

        assert sorted(results) == [[], MIGRATION_NAMES]
        await one.ping()
        await two.ping()
    finally:
        await one.close()
        await two.close()
    rows = await query(empty_url, "SELECT version FROM schema_migrations")
    assert len(rows) == len(MIGRATIONS)


# The arguments intake_commit took in each release that made it by a numbered migration,
# by the migration after it. Those migrations no longer hold it (its repeatable file
# does), so each test database is given a function of that signature, as it had.
_FIRST_COMMIT = (
    "text, text, text, text, json, text, text, double precision, text, timestamptz, text,"
    " text, text, text, text, json, timestamptz, text, text, text, text, timestamptz,"
    " timestamptz, text, text, bigint"
)
_RELEASED_COMMITS = {
    "0004_commit_in_parallel": _FIRST_COMMIT,
    "0006_uploads": _FIRST_COMMIT + ", text, text, boolean",
    "0008_storage_ceiling": _FIRST_COMMIT + ", text, text, boolean, jsonb",
    "0024_spam_reasons": _FIRST_COMMIT + ", text, text, boolean, jsonb, bigint, bigint",
    "0026_search_text_sent": _FIRST_COMMIT + ", text, text, boolean, jsonb, bigint, bigint, text",
}

# The function as the catalog has it, but for the schema it is in.
_COMMIT_DEFINITION = """
    SELECT pg_get_function_arguments(p.oid) AS arguments,
        pg_get_function_result(p.oid) AS result, l.lanname, p.prosrc, p.provolatile
    FROM pg_proc AS p JOIN pg_language AS l ON l.oid = p.prolang
    WHERE p.proname = 'intake_commit' AND p.pronamespace = current_schema()::regnamespace
"""


@pytest.mark.parametrize("migration", list(_RELEASED_COMMITS))
async def test_a_database_of_an_earlier_release_ends_with_the_live_commit_alone(
    empty_url: str, postgres_url: str, store: PostgresStore, migration: str
) -> None:
    async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
        await postgres_before(conn, migration)
        await conn.execute(
            f"CREATE FUNCTION intake_commit({_RELEASED_COMMITS[migration]}) RETURNS text"
            " LANGUAGE sql AS 'SELECT NULL::text'"
        )
    opened = await open_postgres_store(empty_url)
    try:
        with pytest.raises(StorageUnavailable, match="intake migrate"):
            await opened.ping()
        assert await opened.migrate() == postgres_from_on(migration)
        await opened.ping()
    finally:
        await opened.close()

    after = await query(empty_url, _COMMIT_DEFINITION)
    fresh = await query(postgres_url, _COMMIT_DEFINITION)  # `store`'s, migrated fresh
    assert len(after) == 1
    assert after == fresh


async def test_a_repeatable_file_is_applied_again_once_it_changes(
    empty_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = await open_postgres_store(empty_url)
    try:
        assert await opened.migrate() == MIGRATION_NAMES
        released = REPEATABLES
        changed = tuple(
            Repeatable(r.name, (*r.statements, "COMMENT ON FUNCTION intake_commit IS 'next'"))
            if r.name == "repeatable/intake_commit"
            else r
            for r in released
        )
        monkeypatch.setattr(pg_migrations, "REPEATABLES", changed)
        with pytest.raises(StorageUnavailable, match="intake migrate"):
            await opened.ping()

        assert await opened.migrate() == ["repeatable/intake_commit"]
        assert await opened.migrate() == []
        assert await query(empty_url, "SELECT obj_description('intake_commit'::regproc)") == [
            {"obj_description": "next"}
        ]
        # Rolled back to the release before: its version goes back in, once.
        monkeypatch.setattr(pg_migrations, "REPEATABLES", released)
        await opened.ping()  # applied once: a server of the release before stays ready
        assert await opened.migrate() == ["repeatable/intake_commit"]
        assert await opened.migrate() == []
    finally:
        await opened.close()

    rows = await query(empty_url, "SELECT name FROM schema_repeatables ORDER BY name")
    assert [row["name"] for row in rows] == ["repeatable/intake_commit"] * 2 + [
        "repeatable/intake_commit_many",
        "repeatable/intake_search_text",
    ]


async def test_the_search_text_is_the_same_as_the_first_version_made_it(
    store: PostgresStore, postgres_url: str
) -> None:
    # `store` migrates the session's database, which holds the function compared.
    (first,) = (s for s in MIGRATIONS[9].statements if "FUNCTION intake_search_text" in s)
    values = [
        '{"a": "Ada", "b": {"c": ["ÉCOLE", 1, true, null, {"d": "x\\u0000y"}]}}',
        '{"n": 3, "t": "line\\nbreak", "e": ""}',
        '{"q": "a\\\\u0000b", "k": "\\\\\\u0000"}',
        "{}",
    ]
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        await conn.execute(first.replace("intake_search_text", "pg_temp.first_search_text", 1))
        for value in values:
            cursor = await conn.execute(
                "SELECT intake_search_text(%s::json) = pg_temp.first_search_text(%s::json)",
                (value, value),
            )
            assert await cursor.fetchone() == (True,), value


async def test_a_row_inserted_without_its_search_text_gets_it_from_its_data(
    store: PostgresStore, postgres_url: str
) -> None:
    await seed(store)
    data: FieldData = {"Name": "ÉCOLE Ada", "list": ["Two", 3, {"k": "Deep"}]}
    assert await store.submissions.commit(plan(evolve(submission(1), data=data))) == Committed()
    # As a server of the release before commits, without p_search_text.
    params = commit_params(plan(evolve(submission(2), data=data)))
    del params["search_text"]
    older = SINGLE.replace(",\n        p_search_text => %(search_text)s::text", "")
    assert older != SINGLE
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        await conn.execute(older, params)
        # And as a row made by hand.
        await conn.execute(
            "INSERT INTO submissions (submission_id, form_id, workspace_id, status, data,"
            " spam_score, created_at) VALUES (%s, %s, %s, 'accepted', %s, 0, now())",
            (submission(3).submission_id, FORM_ID, WORKSPACE_ID, json.dumps(data)),
        )

    rows = await query(postgres_url, "SELECT search_text FROM submissions")
    assert [row["search_text"] for row in rows] == ["école ada\ntwo\ndeep"] * 3


# Several processes at once: two stores, two pools, as two workers of `intake serve`


async def test_two_stores_share_the_quota_exactly(backend: PostgresBackend) -> None:
    one = await backend.open_postgres()
    two = await backend.open_postgres()
    try:
        await seed(one)
        subs = [submission(n) for n in range(20)]
        results = await asyncio.gather(
            *(
                (one if n % 2 else two).submissions.commit(plan(sub, charge=quota(7)))
                for n, sub in enumerate(subs)
            )
        )

        assert results.count(Committed()) == 7
        assert results.count(QuotaReached()) == 13
        committed = [sub for sub, r in zip(subs, results, strict=True) if r == Committed()]
        assert await stored(one) == committed
        assert len(await two.submissions.outbox()) == 7
        assert await two.workspaces.usage(WORKSPACE_ID, PERIOD) == 7
    finally:
        await one.close()
        await two.close()


async def test_two_stores_commit_one_key_once(backend: PostgresBackend) -> None:
    one = await backend.open_postgres()
    two = await backend.open_postgres()
    try:
        await seed(one)
        subs = [submission(n) for n in range(10)]
        results = await asyncio.gather(
            *(
                (one if n % 2 else two).submissions.commit(
                    plan(sub, idempotency=record(sub), charge=quota(100))
                )
                for n, sub in enumerate(subs)
            )
        )

        winners = [sub for sub, r in zip(subs, results, strict=True) if r == Committed()]
        assert len(winners) == 1
        assert [r for r in results if r != Committed()] == [
            IdempotencyTaken(record(winners[0]))
        ] * 9
        assert await stored(two) == winners
        assert len(await one.submissions.outbox()) == 1
        assert await one.workspaces.usage(WORKSPACE_ID, PERIOD) == 1
    finally:
        await one.close()
        await two.close()


async def wait_until_blocked(url: str, application_name: str) -> None:
    """Until a backend of that name waits for a lock (another transaction's)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        rows = await query(
            url,
            "SELECT 1 FROM pg_stat_activity WHERE application_name = %s"
            " AND wait_event_type = 'Lock'",
            application_name,
        )
        if rows:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no backend of {application_name} waited for a lock")


async def wait_until_gone(url: str, pids: list[int]) -> None:
    """Until none of these backends is left: pg_terminate_backend only signals them, and
    on a busy machine an idle one may still answer the pool's check a moment later."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not await query(url, "SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", pids):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"backends {pids} outlived their termination")


@pytest.mark.parametrize("earlier", [0, 2])
async def test_a_key_taken_while_the_commit_waited_gives_the_count_back(
    backend: PostgresBackend, postgres_url: str, earlier: int
) -> None:
    # The commit finds the key free, counts one, then meets another transaction's
    # uncommitted claim of the key, waits for it, and loses.
    name = f"intake_race_{secrets.token_hex(4)}"
    opened = await backend.open_postgres(url=database_url(postgres_url, application_name=name))
    try:
        await seed(opened)
        for n in range(earlier):
            await opened.submissions.commit(plan(submission(100 + n), charge=quota(10)))
        first, late = submission(1), submission(2)
        async with (
            await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as other,
            other.transaction(),
        ):
            await other.execute(
                "INSERT INTO idempotency (scope, key, fingerprint, submission_id, created_at)"
                " VALUES (%s, %s, %s, %s, %s)",
                (
                    record(first).scope,
                    record(first).key,
                    record(first).fingerprint,
                    first.submission_id,
                    first.created_at,
                ),
            )
            task = asyncio.create_task(
                opened.submissions.commit(plan(late, idempotency=record(late), charge=quota(10)))
            )
            await wait_until_blocked(postgres_url, name)

        assert await task == IdempotencyTaken(record(first))
        assert await opened.workspaces.usage(WORKSPACE_ID, PERIOD) == earlier
        rows = await query(postgres_url, "SELECT count FROM monthly_usage")
        assert rows == ([{"count": earlier}] if earlier else [])  # no row left at zero
        assert await opened.submissions.get(late.submission_id) is None
    finally:
        await opened.close()


# The pool, and failures


async def test_a_full_pool_answers_storage_unavailable_at_once(backend: PostgresBackend) -> None:
    opened = await backend.open_postgres(max_size=1, pool_timeout=0.2)
    try:
        async with opened._db._pool.connection():  # the only connection, held
            started = time.monotonic()
            with pytest.raises(StorageUnavailable, match="no free connection"):
                await opened.workspaces.list()
            assert time.monotonic() - started < 1.0

        assert await opened.workspaces.list() == []  # given back: served again
    finally:
        await opened.close()


async def test_a_killed_connection_fails_its_commit_leaves_nothing_and_the_store_recovers(
    backend: PostgresBackend, postgres_url: str
) -> None:
    name = f"intake_kill_{secrets.token_hex(4)}"
    url = database_url(postgres_url, application_name=name)
    opened = await backend.open_postgres(url=url, min_size=3)  # idle connections die too
    try:
        await seed(opened)
        sub = submission(1)
        failing = plan(sub, idempotency=record(sub), charge=quota(10))
        async with (
            await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as other,
            other.transaction(),
        ):
            # The commit has counted the quota and claimed the key when it blocks here.
            await other.execute("LOCK TABLE outbox IN ACCESS EXCLUSIVE MODE")
            task = asyncio.create_task(opened.submissions.commit(failing))
            await wait_until_blocked(postgres_url, name)
            killed = await query(
                postgres_url,
                "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s",
                name,
            )
            assert len(killed) == 3
            await wait_until_gone(postgres_url, [row["pid"] for row in killed])

            with pytest.raises(StorageUnavailable):
                await task

        assert await stored(opened) == []
        assert await opened.workspaces.usage(WORKSPACE_ID, PERIOD) == 0
        found = await opened.submissions.find_idempotency(
            record(sub).scope, record(sub).key, sub.created_at - RETENTION
        )
        assert found is None
        assert await opened.submissions.outbox() == []
        assert await opened.submissions.commit(failing) == Committed()
        assert await stored(opened) == [sub]
        assert await opened.workspaces.usage(WORKSPACE_ID, PERIOD) == 1
    finally:
        await opened.close()


async def test_an_unreachable_server_fails_the_open_quickly() -> None:
    started = time.monotonic()

    with pytest.raises(StorageUnavailable):
        await open_postgres_store(
            "postgresql://postgres@127.0.0.1:1/intake?connect_timeout=1", open_timeout=0.5
        )
    assert time.monotonic() - started < 3.0


@pytest.mark.parametrize("bad_url", ["sqlite:///intake.db", "host=localhost dbname=intake", ""])
async def test_a_url_that_is_not_postgresql_is_refused(bad_url: str) -> None:
    with pytest.raises(ValueError, match="PostgreSQL"):
        await open_postgres_store(bad_url)


# Values


async def test_a_session_in_another_time_zone_still_reads_utc(postgres_url: str) -> None:
    url = database_url(postgres_url, options="-c TimeZone=Asia/Kolkata")
    backend = PostgresBackend(postgres_url)
    opened = await backend.open_postgres(url=url)
    try:
        await opened.workspaces.add(workspace())
        back = await opened.workspaces.get(WORKSPACE_ID)
        assert back == workspace()
        assert back is not None
        assert back.created_at is not None
        assert back.created_at.tzinfo is UTC
    finally:
        await opened.close()


async def test_text_with_nul_is_a_programming_error_not_an_outage(store: PostgresStore) -> None:
    # The domain refuses NUL; PostgreSQL text and jsonb cannot hold it.
    await seed(store)

    with pytest.raises(ValueError, match="NUL"):
        await store.submissions.commit(plan(evolve(submission(1), subject="a\x00b")))
    with pytest.raises(ValueError, match="NUL"):
        await store.forms.add(evolve(form("frm_2", public_form_key="pk2"), name="a\x00b"))
    with pytest.raises(ValueError, match="NUL"):
        await store.forms.add(
            evolve(form("frm_2", public_form_key="pk2"), allowed_origins=("https://a\x00",))
        )
    assert await stored(store) == []
    assert await store.forms.get("frm_2") is None


async def test_data_is_kept_as_json_text_in_the_order_sent(
    store: PostgresStore, postgres_url: str
) -> None:
    await seed(store)
    sub = submission(1, data={"z": "last?", "a": -0.0, "m": [3, 1, 2]})
    await store.submissions.commit(plan(sub))

    rows = await query(postgres_url, "SELECT data::text AS data FROM submissions")

    assert rows == [{"data": '{"z":"last?","a":-0.0,"m":[3,1,2]}'}]


async def test_a_commit_wakes_the_relay(store: PostgresStore, postgres_url: str) -> None:
    await seed(store)
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as relay:
        await relay.execute("LISTEN intake_outbox")

        await store.submissions.commit(plan(submission(1)))
        assert await store.submissions.commit(plan(submission(2), charge=quota(0))) == (
            QuotaReached()
        )

        woken = [n.channel async for n in relay.notifies(timeout=0.5)]
    assert woken == ["intake_outbox"]  # one commit, one wake-up; none for the refusal


def _page(query: SubmissionQuery) -> tuple[str, tuple[object, ...]]:
    statement, params = page_statement(query, moment, pg_dialect.SEARCH)
    return for_psycopg(statement), tuple(params)


SPAM = SubmissionStatus.SPAM


# Each hot query reads through an index, and none sorts. The tables are near empty, where
# a sequential scan is the cheaper plan: seqscan is turned off to show an index serves.
HOT_QUERIES: dict[str, tuple[str, tuple[object, ...]]] = {
    "resolve_public_key": (for_psycopg(shared.RESOLVE_PUBLIC_KEY), ("pk",)),
    "resolve_id": (for_psycopg(shared.RESOLVE_ID), (FORM_ID,)),
    "find_by_hash": (for_psycopg(shared.FIND_API_KEY), (b"h",)),
    "find_idempotency": (
        for_psycopg(shared.FIND_IDEMPOTENCY),
        ("s", "k", datetime(2026, 1, 1, tzinfo=UTC)),
    ),
    "usage": (for_psycopg(pg_store._USAGE_STATEMENTS.usage), (WORKSPACE_ID, PERIOD)),
    "iterate": _page(SubmissionQuery(FORM_ID, after="", limit=500, oldest_first=True)),
    "page": _page(SubmissionQuery(FORM_ID, after="sub_z")),
    "page_by_status": _page(SubmissionQuery(FORM_ID, SubmissionFilter(frozenset({SPAM})))),
    "outbox": (for_psycopg(shared.OUTBOX), (100,)),
}


@pytest.mark.parametrize("name", list(HOT_QUERIES))
async def test_hot_queries_use_an_index_and_no_sort(
    store: PostgresStore, postgres_url: str, name: str
) -> None:
    text, params = HOT_QUERIES[name]
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        await conn.execute("SET enable_seqscan = off")
        cursor = await conn.execute("EXPLAIN (FORMAT JSON) " + text, params)
        row = await cursor.fetchone()
    assert row is not None

    nodes = [node["Node Type"] for node in _plan_nodes(row[0][0]["Plan"])]

    assert any(node.startswith("Index") for node in nodes), nodes
    assert "Seq Scan" not in nodes, nodes
    assert "Sort" not in nodes, nodes


def _plan_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)
