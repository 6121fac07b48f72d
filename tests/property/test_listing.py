"""Paging through a form's submissions with any limits, under any filter, gives exactly
the submissions the filter matches, newest first, each once: on the in-memory store and
on SQLite (the statement both SQL stores share)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from intake.adapters.memory import InMemoryStore
from intake.adapters.sqlite import open_sqlite_store
from intake.domain.listing import SubmissionFilter, SubmissionQuery
from intake.domain.model import FieldData, FieldValue, Submission, SubmissionStatus
from intake.ports.store import Store
from tests.conftest import examples
from tests.contract.builders import plan, seed, submission

T0 = datetime(2026, 3, 1, tzinfo=UTC)
# A small alphabet, with LIKE's and case's pitfalls, so that searches often find something.
WORDS = st.text(alphabet="aAbB%_\\é É", min_size=1, max_size=4)
VALUES: st.SearchStrategy[FieldValue] = st.one_of(
    WORDS, st.lists(WORDS, max_size=2).map(list[FieldValue]), st.integers(0, 9)
)
DATAS: st.SearchStrategy[FieldData] = st.dictionaries(
    st.sampled_from(["a", "b", "ab"]), VALUES, max_size=3
)


@st.composite
def rows(draw: st.DrawFn) -> list[Submission]:
    count = draw(st.integers(0, 25))
    return [
        submission(
            n,
            status=draw(st.sampled_from(list(SubmissionStatus))),
            created_at=T0 + timedelta(seconds=draw(st.integers(0, 30))),
            data=draw(DATAS),
        )
        for n in range(count)
    ]


TIMES = st.one_of(st.none(), st.integers(0, 31).map(lambda s: T0 + timedelta(seconds=s)))
FILTERS = st.builds(
    SubmissionFilter,
    statuses=st.frozensets(st.sampled_from(list(SubmissionStatus))),
    since=TIMES,
    until=TIMES,
    text=st.one_of(st.none(), WORDS),
)
LIMITS = st.lists(st.integers(1, 7), min_size=1, max_size=30)


async def walk(store: Store, chosen: SubmissionFilter, limits: list[int]) -> list[Submission]:
    seen: list[Submission] = []
    after: str | None = None
    for turn in range(1000):
        limit = limits[turn % len(limits)]
        page = await store.submissions.page(SubmissionQuery("frm_1", chosen, after, limit))
        assert len(page.submissions) <= limit
        seen.extend(page.submissions)
        if not page.more:
            return seen
        assert len(page.submissions) == limit
        after = seen[-1].submission_id
    raise AssertionError("the pages never end")


async def check(
    store: Store, subs: list[Submission], chosen: SubmissionFilter, limits: list[int]
) -> None:
    await seed(store)
    for sub in subs:
        await store.submissions.commit(plan(sub))
    expected = sorted((s for s in subs if chosen.matches(s)), key=lambda s: s.submission_id)

    assert await walk(store, chosen, limits) == expected[::-1]


def run(
    opened: Callable[[], Awaitable[Store]],
    subs: list[Submission],
    chosen: SubmissionFilter,
    limits: list[int],
) -> None:
    async def body() -> None:
        store = await opened()
        try:
            await check(store, subs, chosen, limits)
        finally:
            await store.close()

    asyncio.run(body())


@given(rows(), FILTERS, LIMITS)
def test_pages_give_the_filtered_set_newest_first_in_memory(
    subs: list[Submission], chosen: SubmissionFilter, limits: list[int]
) -> None:
    async def opened() -> Store:
        return InMemoryStore()

    run(opened, subs, chosen, limits)


@settings(max_examples=examples(40), deadline=None)
@given(rows(), FILTERS, LIMITS)
def test_pages_give_the_filtered_set_newest_first_on_sqlite(
    subs: list[Submission], chosen: SubmissionFilter, limits: list[int]
) -> None:
    async def opened() -> Store:
        return await open_sqlite_store("sqlite:///:memory:")

    run(opened, subs, chosen, limits)


def test_the_search_of_a_value_reads_text_at_any_depth() -> None:
    data: FieldData = {"a": ["x", {"k": "Deep"}], "b": 5}
    chosen = SubmissionFilter(text="deep")

    assert chosen.matches(submission(1, data=data))
    assert not SubmissionFilter(text="5").matches(submission(1, data=data))
