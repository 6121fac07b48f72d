"""PostgreSQL's group commit (adapters/postgres/commit_batch.py): commits made together
go in one statement; two workers' batches lock in one order and never wait on each
other in a circle; the quota stays exact with batches of several commits of a month."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Sequence

import attrs
import pytest
from psycopg.rows import DictRow

from intake.adapters.postgres import PostgresStore, commit_batch, mapping
from intake.adapters.postgres.database import Database
from intake.adapters.sql_rows import Params
from intake.domain.model import FormMode
from intake.ports.submissions import CommitResult, Committed, FormCheck
from tests.contract.builders import PERIOD, form, plan, quota, seed, submission
from tests.contract.conftest import PostgresBackend
from tests.contract.test_postgres import query

pytestmark = [pytest.mark.anyio, pytest.mark.services]

WORKSPACES = ("ws_1", "ws_2", "ws_3")


@pytest.fixture
def backend(postgres_url: str) -> PostgresBackend:
    return PostgresBackend(postgres_url)


@pytest.fixture
async def stores(backend: PostgresBackend) -> AsyncIterator[list[PostgresStore]]:
    """Two stores, as two workers of `intake serve`, each with its pool."""
    one = await backend.open_postgres()
    two = await backend.open_postgres()
    try:
        await seed(one, *(form(f"frm_{w}", w, f"pk0{w}") for w in WORKSPACES))
        yield [one, two]
    finally:
        await one.close()
        await two.close()


def _database(store: PostgresStore) -> Database:
    return store._db


async def test_commits_made_together_go_in_one_statement(
    stores: list[PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    subs = [submission(n, form_id="frm_ws_1", workspace_id="ws_1") for n in range(1, 7)]
    statements: list[int] = []
    send = commit_batch.send

    async def counting(db: Database, items: Sequence[Params]) -> list[DictRow]:
        statements.append(len(items))
        return await send(db, items)

    monkeypatch.setattr(commit_batch, "send", counting)
    results = await asyncio.gather(
        *(stores[0].submissions.commit(plan(sub, charge=quota(1000, "ws_1"))) for sub in subs)
    )

    assert results == [Committed()] * 6
    assert statements == [6]


async def test_two_workers_batches_over_several_workspaces_do_not_deadlock(
    stores: list[PostgresStore],
) -> None:
    # Near the ceiling each workspace is counted exactly: a batch holds every quota row
    # of it until its end. Sent in opposite orders, the two batches would each hold a
    # workspace the other waits for, were they not put in one order.
    def params(n: int, workspace_id: str) -> Params:
        sub = submission(n, form_id=f"frm_{workspace_id}", workspace_id=workspace_id)
        return mapping.commit_params(plan(sub, charge=quota(100, workspace_id)))

    for round_ in range(5):
        base = round_ * 100
        forward = [params(base + i, w) for i, w in enumerate(WORKSPACES)]
        backward = [params(base + 50 + i, w) for i, w in enumerate(reversed(WORKSPACES))]

        async def send(db: Database, batch: list[Params]) -> list[str]:
            (chunk,) = commit_batch.chunks(batch)
            items = commit_batch.counted(batch[i] for i in chunk)
            assert all(item["quota_exact"] for item in items)
            return [row["outcome"] for row in await commit_batch.send(db, items)]

        answers = await asyncio.gather(
            send(_database(stores[0]), forward), send(_database(stores[1]), backward)
        )
        # Sent as they are, without the retry one by one that follows a deadlock.
        assert list(answers) == [["committed"] * 3] * 2


async def test_batches_of_two_workers_across_the_ceiling_commit_exactly_the_ceiling(
    stores: list[PostgresStore], postgres_url: str
) -> None:
    # Far enough from the ceiling to start counting beside each other with batches of
    # up to PER_WORKSPACE, then exactly: 2 workers, far more commits than the ceiling.
    ceiling = commit_batch.RESERVE + commit_batch.SHARDS * 3

    async def one(n: int) -> CommitResult:
        sub = submission(n, form_id="frm_ws_1", workspace_id="ws_1")
        return await stores[n % 2].submissions.commit(plan(sub, charge=quota(ceiling, "ws_1")))

    results = await asyncio.gather(*(one(n) for n in range(1, ceiling + 61)))

    outcomes = Counter(type(result).__name__ for result in results)
    assert outcomes == {"Committed": ceiling, "QuotaReached": 60}
    assert await stores[0].workspaces.usage("ws_1", PERIOD) == ceiling
    stored = await query(postgres_url, "SELECT count(*) AS n FROM submissions")
    assert stored == [{"n": ceiling}]


async def test_a_group_committed_set_based_answers_each_commit_as_intake_commit_does(
    stores: list[PostgresStore], postgres_url: str
) -> None:
    store = stores[0]
    await store.forms.add(
        attrs.evolve(form("frm_open", "ws_1", "pk0open"), mode=FormMode.PUBLIC, enabled=True)
    )
    # ws_2's month begun: its shards are made, one submission counted.
    first = submission(1, form_id="frm_ws_2", workspace_id="ws_2")
    assert await store.submissions.commit(plan(first, charge=quota(100, "ws_2"))) == Committed()

    def params(n: int, workspace_id: str, charge: int | None, check: FormCheck | None) -> Params:
        sub = submission(n, form_id=f"frm_{workspace_id}", workspace_id=workspace_id)
        made = plan(sub, charge=None if charge is None else quota(charge, workspace_id))
        return mapping.commit_params(attrs.evolve(made, check=check))

    items = [
        params(10, "ws_1", 1000, FormCheck("frm_missing", "pk0missing")),
        params(11, "ws_1", 1000, FormCheck("frm_open", "pk0wrong")),
        params(12, "ws_1", 1000, FormCheck("frm_ws_1", "pk0ws_1")),  # protected
        params(13, "ws_1", 1000, FormCheck("frm_ws_1")),  # paused
        params(14, "ws_1", 0, None),
        # ws_1's month not begun: each as intake_commit alone, which makes its shards.
        params(15, "ws_1", 1000, FormCheck("frm_open", "pk0open")),
        params(16, "ws_1", 1000, None),
        # 1 counted: the next is counted beside others while 1 + 1 + 31 <= 33.
        params(17, "ws_2", 33, None),
        params(18, "ws_2", 33, None),
        params(19, "ws_3", None, None),
    ]
    assert all(commit_batch.plain(item) for item in items)

    rows = await _database(store).fetch_all(commit_batch.MANY, (commit_batch.as_json(items),))

    assert [row["outcome"] for row in rows] == [
        "form_not_found",
        "form_not_found",
        "unauthorized",
        "form_disabled",
        "quota_reached",
        "committed",
        "committed",
        "committed",
        "quota_exact",
        "committed",
    ]
    committed = sorted(str(items[i]["submission_id"]) for i in (5, 6, 7, 9))
    written = await query(postgres_url, "SELECT submission_id FROM submissions ORDER BY 1")
    assert [row["submission_id"] for row in written] == sorted([*committed, first.submission_id])
    events = await query(postgres_url, "SELECT submission_id FROM outbox ORDER BY 1")
    assert events == written
    assert await store.workspaces.usage("ws_1", PERIOD) == 2
    assert await store.workspaces.usage("ws_2", PERIOD) == 2
    charged = await query(
        postgres_url,
        "SELECT count(*) AS n FROM submissions WHERE charged_period = %s AND search_text LIKE %s",
        PERIOD,
        "%@example.com%",
    )
    assert charged == [{"n": 5}]
