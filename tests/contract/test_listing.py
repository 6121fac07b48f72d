"""A page of a form's submissions, in every store: newest first by id, a cursor that holds
while rows come and go, and each filter (status, time, search) as SubmissionFilter says."""

from __future__ import annotations

from datetime import timedelta

import pytest

from intake.domain.listing import SubmissionFilter, SubmissionQuery
from intake.domain.model import FieldData, Submission, SubmissionStatus
from intake.ports.store import Store
from tests.contract.builders import T0, form, plan, seed, submission

pytestmark = pytest.mark.anyio

ACCEPTED, SPAM, UNVERIFIED = (
    SubmissionStatus.ACCEPTED,
    SubmissionStatus.SPAM,
    SubmissionStatus.UNVERIFIED,
)


async def commit(store: Store, *subs: Submission) -> None:
    for sub in subs:
        assert type(await store.submissions.commit(plan(sub))).__name__ == "Committed"


async def ids(store: Store, chosen: SubmissionFilter, limit: int = 200) -> list[str]:
    page = await store.submissions.page(SubmissionQuery("frm_1", chosen, limit=limit))
    return [s.submission_id for s in page.submissions]


async def walk(store: Store, chosen: SubmissionFilter, limit: int) -> list[Submission]:
    """Every page in turn, as a client follows next_cursor."""
    query = SubmissionQuery("frm_1", chosen, limit=limit)
    seen: list[Submission] = []
    while True:
        page = await store.submissions.page(query)
        assert len(page.submissions) <= limit
        seen.extend(page.submissions)
        if not page.more:
            return seen
        query = SubmissionQuery("frm_1", chosen, after=seen[-1].submission_id, limit=limit)


async def test_a_page_is_newest_first_and_says_whether_more_follow(store: Store) -> None:
    await seed(store, form(), form("frm_2", public_form_key="pk2"))
    subs = [submission(n) for n in range(7)]
    await commit(store, *reversed(subs), submission(9, form_id="frm_2"))

    first = await store.submissions.page(SubmissionQuery("frm_1", limit=3))
    assert first.submissions == tuple(reversed(subs[4:]))
    assert first.more
    whole = await store.submissions.page(SubmissionQuery("frm_1", limit=7))
    assert whole.submissions == tuple(reversed(subs))
    assert not whole.more
    assert (await store.submissions.page(SubmissionQuery("frm_missing"))).submissions == ()


async def test_pages_follow_each_other_whatever_the_limit(store: Store) -> None:
    await seed(store)
    subs = [submission(n) for n in range(10)]
    await commit(store, *subs)

    for limit in (1, 3, 4, 10, 11):
        assert await walk(store, SubmissionFilter(), limit) == list(reversed(subs))


async def test_oldest_first_goes_the_other_way(store: Store) -> None:
    await seed(store)
    subs = [submission(n) for n in range(5)]
    await commit(store, *subs)
    query = SubmissionQuery("frm_1", limit=2, oldest_first=True, after=subs[1].submission_id)

    page = await store.submissions.page(query)

    assert page.submissions == tuple(subs[2:4])
    assert page.more


async def test_a_cursor_holds_while_rows_are_added_and_deleted(store: Store) -> None:
    await seed(store)
    subs = [submission(n, status=SPAM if n % 2 else ACCEPTED) for n in range(1, 9)]
    await commit(store, *subs)
    first = await store.submissions.page(SubmissionQuery("frm_1", limit=2))
    last_seen = first.submissions[-1].submission_id  # n = 7, spam

    # Newer rows arrive, and spam rows go: the one the cursor names among them.
    await commit(store, submission(20), submission(21))
    while await store.deliveries.fan_out(T0 + timedelta(days=2), 100):
        pass
    erased = await store.submissions.erase_flagged(T0 + timedelta(days=1), 100)
    assert last_seen in erased.submission_ids

    rest = await store.submissions.page(SubmissionQuery("frm_1", after=last_seen, limit=10))
    assert [s.submission_id for s in rest.submissions] == [
        s.submission_id for s in reversed(subs[:6]) if s.status is ACCEPTED
    ]


async def test_statuses_filter_any_of_them(store: Store) -> None:
    await seed(store)
    statuses = [ACCEPTED, SPAM, UNVERIFIED, SPAM, ACCEPTED, UNVERIFIED]
    subs = [submission(n, status=status) for n, status in enumerate(statuses)]
    await commit(store, *subs)

    for chosen in ({SPAM}, {SPAM, UNVERIFIED}, {ACCEPTED}, set(SubmissionStatus)):
        expected = [s.submission_id for s in reversed(subs) if s.status in chosen]
        assert await ids(store, SubmissionFilter(frozenset(chosen))) == expected
    assert await ids(store, SubmissionFilter()) == [s.submission_id for s in reversed(subs)]


async def test_since_is_inclusive_and_until_exclusive_to_the_microsecond(store: Store) -> None:
    await seed(store)
    subs = [submission(n, created_at=T0 + timedelta(seconds=n)) for n in range(5)]
    await commit(store, *subs)
    at_1, at_3 = subs[1].created_at, subs[3].created_at

    assert await ids(store, SubmissionFilter(since=at_1, until=at_3)) == [
        subs[2].submission_id,
        subs[1].submission_id,
    ]
    micro = timedelta(microseconds=1)
    assert await ids(store, SubmissionFilter(since=at_1 + micro, until=at_3 + micro)) == [
        subs[3].submission_id,
        subs[2].submission_id,
    ]
    assert await ids(store, SubmissionFilter(since=at_3 + micro)) == [subs[4].submission_id]


async def search(store: Store, datas: list[FieldData], text: str) -> list[int]:
    """Which of `datas` (by index) a search for `text` finds."""
    await seed(store)
    subs = [submission(n, data=data) for n, data in enumerate(datas)]
    await commit(store, *subs)
    found = await ids(store, SubmissionFilter(text=text))
    return sorted(n for n, s in enumerate(subs) if s.submission_id in found)


async def test_search_matches_values_whatever_their_case(store: Store) -> None:
    datas: list[FieldData] = [
        {"message": "Hello World"},
        {"message": "HELLO there"},
        {"message": "goodbye"},
        {"hello": "a name is not a value"},
        {"topics": ["Billing", "Say hello"]},
        {"nested": {"deep": ["x", {"k": "Hello"}]}},
        {"count": 12, "ok": True},
    ]

    assert await search(store, datas, "hello") == [0, 1, 4, 5]


async def test_search_does_not_match_across_two_values_nor_numbers(store: Store) -> None:
    datas: list[FieldData] = [{"a": "foo", "b": "bar"}, {"n": 12345}, {"a": "foobar"}]

    assert await search(store, datas, "foobar") == [2]
    assert await ids(store, SubmissionFilter(text="234")) == []


async def test_search_takes_percent_underscore_and_backslash_as_they_are(store: Store) -> None:
    datas: list[FieldData] = [
        {"m": "50% off"},
        {"m": "500 off"},
        {"m": "a_b"},
        {"m": "axb"},
        {"m": "back\\slash"},
        {"m": "backslash"},
    ]

    assert await search(store, datas, "0% o") == [0]
    for text, expected in (("%", [0]), ("a_b", [2]), ("_", [2]), ("k\\s", [4])):
        assert sorted(await found_in(store, text)) == expected


async def found_in(store: Store, text: str) -> list[int]:
    """The `n` of the builders' submissions a search finds, where the store is seeded."""
    found = set(await ids(store, SubmissionFilter(text=text)))
    return [n for n in range(10) if submission(n).submission_id in found]


async def test_search_of_non_ascii_text_folds_its_case(store: Store) -> None:
    datas: list[FieldData] = [{"name": "ÉLODIE Dupré"}, {"name": "elodie"}]

    assert await search(store, datas, "élodie") == [0]


async def test_filters_combine(store: Store) -> None:
    await seed(store)
    subs = [
        submission(
            n,
            status=SPAM if n % 2 else ACCEPTED,
            created_at=T0 + timedelta(minutes=n),
            data={"m": "needle" if n % 3 == 0 else "hay"},
        )
        for n in range(12)
    ]
    await commit(store, *subs)
    chosen = SubmissionFilter(
        frozenset({SPAM}),
        since=T0 + timedelta(minutes=2),
        until=T0 + timedelta(minutes=11),
        text="NEED",
    )

    got = await walk(store, chosen, 1)

    assert got == [s for s in reversed(subs) if chosen.matches(s)]
    assert [s.submission_id for s in got] == [subs[9].submission_id, subs[3].submission_id]
