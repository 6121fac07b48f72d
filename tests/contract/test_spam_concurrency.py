"""Concurrent teaching of submissions whose tokens overlap, in two workspaces, from two
stores at once (two processes): triage orders, confirmations, the rule for untouched
submissions and a history taught, all at once. No deadlock, no lost update, and the
statistics end exactly as what each submission and history teach when it is over."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable

import pytest

from intake.domain.model import SubmissionStatus
from intake.domain.spam.model import INSTANCE, Label, Lesson
from intake.domain.triage import deletion_event, release_event
from intake.ports.spam_statistics import Settlement
from intake.ports.store import Store
from intake.ports.submissions import Committed
from intake.ports.triage import Erasure, Release
from tests.contract.builders import form, plan, seed, submission
from tests.contract.conftest import PostgresBackend, SqliteBackend
from tests.contract.spam_lessons import expected, lesson, snapshot
from tests.contract.test_triage import RELEASE_PERIOD, RELEASED_AT

pytestmark = pytest.mark.anyio

WORKSPACES = ("ws_1", "ws_2")
SUBMISSIONS = 16
ORDERS_EACH = 6  # releases and marks of each submission, all at once
POOL = 6


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[list[Store]]:
    """Two stores on one database, as two processes."""
    opened: list[Store] = []
    if request.param == "sqlite":
        sqlite = SqliteBackend(request.getfixturevalue("tmp_path"))
        opened = [await sqlite.open(), await sqlite.open()]
    else:
        postgres = PostgresBackend(request.getfixturevalue("postgres_url"))
        for _ in range(2):
            opened.append(await postgres.open_postgres(min_size=POOL, max_size=POOL))
    try:
        yield opened
    finally:
        for store in opened:
            await store.close()


def _workspace(n: int) -> str:
    return WORKSPACES[n % 2]


def _order(stores: list[Store], n: int, k: int) -> Awaitable[object]:
    store = stores[k % 2]
    sub = submission(n, workspace_id=_workspace(n), form_id=f"frm_{_workspace(n)}")
    label = Label.HAM if (n + k) % 2 else Label.SPAM
    taught = lesson(n, label, _workspace(n))
    if label is Label.SPAM:
        return store.submissions.mark_spam(sub.submission_id, taught)
    event = release_event(f"evt_{n}_{k}", sub, None, RELEASED_AT)
    return store.submissions.release(Release(sub.submission_id, event, RELEASE_PERIOD, taught))


async def test_concurrent_triage_ends_with_exact_counts(stores: list[Store]) -> None:
    forms = [
        form(f"frm_{ws}", ws, public_form_key=f"pk0{ws.replace('_', '')}") for ws in WORKSPACES
    ]
    await seed(stores[0], *forms)
    for n in range(SUBMISSIONS):
        sub = submission(n, workspace_id=_workspace(n), form_id=f"frm_{_workspace(n)}")
        assert isinstance(await stores[0].submissions.commit(plan(sub)), Committed)
    orders = [_order(stores, n, k) for n in range(SUBMISSIONS) for k in range(ORDERS_EACH)]
    random.Random(27).shuffle(orders)

    results = await asyncio.gather(*orders)

    assert all(r is not None for r in results)
    taught: list[Lesson] = []
    for n in range(SUBMISSIONS):
        sub = submission(n, workspace_id=_workspace(n))
        now = await stores[1].submissions.get(sub.submission_id)
        label = await stores[1].spam.taught(sub.submission_id)
        assert now is not None
        assert label is (Label.SPAM if now.status is SubmissionStatus.SPAM else Label.HAM)
        taught.append(lesson(n, label, _workspace(n)))
    for ws in WORKSPACES:
        assert await snapshot(stores[0], ws) == expected(t for t in taught if t.workspace_id == ws)
    assert await snapshot(stores[1], INSTANCE) == expected(taught)
    # Undone by erasures at once: nothing is left.
    erasures = [stores[n % 2].submissions.erase(_erasure(n, taught[n])) for n in range(SUBMISSIONS)]
    await asyncio.gather(*erasures)
    assert await snapshot(stores[0], INSTANCE) == (0, 0, {})


def _erasure(n: int, taught: Lesson) -> Erasure:
    sub = submission(n, workspace_id=_workspace(n), form_id=f"frm_{_workspace(n)}")
    return Erasure(sub.submission_id, deletion_event(f"evt_del_{n}", sub, RELEASED_AT), taught)


def _teaching(stores: list[Store], n: int, k: int) -> Awaitable[object]:
    """A confirmation, a settlement of a batch read in another order, or a history that
    shares the submission's tokens, from either store."""
    store = stores[k % 2]
    ws = _workspace(n)
    sub = submission(n, workspace_id=ws, form_id=f"frm_{ws}")
    if k % 3 == 0:
        label = Label.HAM if k % 2 else Label.SPAM
        return store.spam.confirm(sub.submission_id, lesson(n, label, ws))
    if k % 3 == 1:
        batch = [
            submission(m, workspace_id=_workspace(m), form_id=f"frm_{_workspace(m)}")
            for m in range(n, SUBMISSIONS)
        ]
        rule = [
            Settlement(s, lesson(m, Label.HAM, s.workspace_id))
            for m, s in enumerate(batch, start=n)
        ]
        return store.spam.settle(rule[::-1])
    return store.spam.seed([lesson(n + SUBMISSIONS, Label.SPAM, ws), lesson(n, Label.HAM, ws)])


async def test_concurrent_confirmations_settlements_and_histories_end_with_exact_counts(
    stores: list[Store],
) -> None:
    forms = [
        form(f"frm_{ws}", ws, public_form_key=f"pk0{ws.replace('_', '')}") for ws in WORKSPACES
    ]
    await seed(stores[0], *forms)
    for n in range(SUBMISSIONS):
        sub = submission(n, workspace_id=_workspace(n), form_id=f"frm_{_workspace(n)}")
        assert isinstance(await stores[0].submissions.commit(plan(sub)), Committed)
    orders = [_order(stores, n, k) for n in range(SUBMISSIONS) for k in range(2)]
    orders += [_teaching(stores, n, k) for n in range(SUBMISSIONS) for k in range(ORDERS_EACH)]
    random.Random(29).shuffle(orders)

    await asyncio.gather(*orders)

    taught: list[Lesson] = []
    for n in range(SUBMISSIONS):
        ws = _workspace(n)
        sub = submission(n, workspace_id=ws)
        label = await stores[1].spam.taught(sub.submission_id)
        assert label is not None  # each was triaged or settled at least once
        taught.append(lesson(n, label, ws))
        # Every history sent: its two messages, each taught once.
        histories = sum(1 for k in range(ORDERS_EACH) if k % 3 == 2)
        taught += [lesson(n + SUBMISSIONS, Label.SPAM, ws), lesson(n, Label.HAM, ws)] * histories
    for ws in WORKSPACES:
        assert await snapshot(stores[0], ws) == expected(t for t in taught if t.workspace_id == ws)
    assert await snapshot(stores[1], INSTANCE) == expected(taught)
