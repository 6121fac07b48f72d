"""On PostgreSQL a search is planned for its own text each time, never prepared: a plan
made for any text reads the trigram index for every one, and for a text that most rows
hold that is the whole index (docs/performance.md, "The dashboard at scale"). The
listing and counts without a search are prepared once run a few times, as every
statement is. What is prepared is read on the store's one connection."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from intake.adapters.postgres import PostgresStore
from intake.domain.listing import SubmissionFilter, SubmissionQuery
from tests.contract.builders import FORM_ID, form, plan, seed, submission
from tests.contract.conftest import PostgresBackend

pytestmark = [pytest.mark.anyio, pytest.mark.services]

RUNS = 8  # beyond psycopg's prepare threshold (5)


@pytest.fixture
async def one_connection(postgres_url: str) -> AsyncIterator[PostgresStore]:
    store = await PostgresBackend(postgres_url).open_postgres(min_size=1, max_size=1)
    try:
        yield store
    finally:
        await store.close()


async def prepared(store: PostgresStore) -> list[str]:
    async with store._db.connection() as conn:
        cursor = await conn.execute("SELECT statement FROM pg_prepared_statements")
        return [row["statement"] for row in await cursor.fetchall()]


async def test_a_search_is_never_prepared_and_the_rest_is(one_connection: PostgresStore) -> None:
    store = one_connection
    await seed(store, form())
    for number in range(3):
        await store.submissions.commit(plan(submission(number)))
    searched = SubmissionFilter(text="example")

    for _ in range(RUNS):
        await store.submissions.page(SubmissionQuery(FORM_ID, searched))
        await store.submissions.status_counts(FORM_ID, searched, 100)
    searches = [text for text in await prepared(store) if "search_text" in text]
    for _ in range(RUNS):
        await store.submissions.page(SubmissionQuery(FORM_ID))
        await store.submissions.status_counts(FORM_ID, SubmissionFilter(), 100)
    others = await prepared(store)

    assert searches == []
    assert any("ORDER BY submission_id" in text for text in others)
    assert any("count(*)" in text for text in others)
    assert not any("search_text" in text for text in others)
