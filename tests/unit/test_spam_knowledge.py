"""What a process knows of the spam statistics (service/spam_knowledge.py), on a fake
clock: loaded on first use, then refreshed beside the submissions at most every 2 s,
at once after this process's triage, whole every 10 minutes, and bounded in tokens."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

import pytest

from intake.adapters.memory import FakeClock, InMemoryStore
from intake.domain.errors import StorageUnavailable
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.spam.hashing import KEY_NAME
from intake.domain.spam.model import INSTANCE, Label, Lesson, pack
from intake.domain.triage import deletion_event
from intake.ports.spam_statistics import Settlement, SpamSummary, StatisticsChange
from intake.ports.triage import Erasure
from intake.service.spam_knowledge import SpamKnowledge
from tests.contract.builders import plan, seed, submission

pytestmark = pytest.mark.anyio

WS, OTHER, THIRD = "ws_1", "ws_2", "ws_3"


class Counted:
    """The memory store's statistics, with the reads asked of them, and a switch to make
    them fail as a store that cannot answer."""

    def __init__(self, store: InMemoryStore) -> None:
        self.inner = store.spam
        self.asked: list[tuple[str, int]] = []
        self.down = False

    async def changes(self, scope: str, since: int, limit: int) -> StatisticsChange:
        if self.down:
            raise StorageUnavailable("down")
        self.asked.append((scope, since))
        return await self.inner.changes(scope, since, limit)

    async def seed(self, lessons: Sequence[Lesson]) -> int:
        return await self.inner.seed(lessons)

    async def confirm(
        self, submission_id: str, lesson: Lesson, if_status: SubmissionStatus | None = None
    ) -> bool:
        return await self.inner.confirm(submission_id, lesson, if_status)

    async def untaught(self, created_before: datetime, limit: int) -> list[Submission]:
        return await self.inner.untaught(created_before, limit)

    async def settle(self, settlements: Sequence[Settlement]) -> int:
        return await self.inner.settle(settlements)

    async def taught(self, submission_id: str) -> Label | None:
        return await self.inner.taught(submission_id)

    async def summary(self, workspace_id: str) -> SpamSummary:
        return await self.inner.summary(workspace_id)


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore()


@pytest.fixture
def counted(store: InMemoryStore) -> Counted:
    return Counted(store)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def knowledge_of(
    store: InMemoryStore, counted: Counted, clock: FakeClock, budget: int = 1000
) -> SpamKnowledge:
    return SpamKnowledge(counted, store.secrets, clock, token_budget=budget)


async def teach(counted: Counted, workspace_id: str, label: Label, *tokens: int) -> None:
    await counted.seed([Lesson(workspace_id, label, tuple(sorted(tokens)))])


async def test_the_hasher_is_the_instances_read_once(
    store: InMemoryStore, clock: FakeClock
) -> None:
    one = SpamKnowledge(store.spam, store.secrets, clock)
    two = SpamKnowledge(store.spam, store.secrets, clock)

    hasher = await one.hasher()

    assert await one.hasher() is hasher
    assert (await two.hasher()).hash("casino") == hasher.hash("casino")
    assert len(await store.secrets.get_or_create(KEY_NAME, b"x" * 32)) == 32


async def test_the_first_use_loads_then_the_steady_state_asks_nothing(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    await teach(counted, WS, Label.SPAM, 1, 2)
    await teach(counted, OTHER, Label.HAM, 2)
    knowledge = knowledge_of(store, counted, clock)

    first = await knowledge.evidence(WS)
    clock.advance(1.9)
    again = await knowledge.evidence(WS)
    await knowledge.settled()

    assert first.own.tokens == {1: pack(1, 0), 2: pack(1, 0)}
    assert first.instance.tokens == {1: pack(1, 0), 2: pack(1, 1)}
    assert (first.instance.spam_messages, first.instance.ham_messages) == (1, 1)
    assert again is not first
    assert again.own is first.own
    assert counted.asked == [(WS, 0), (INSTANCE, 0)]


async def test_changes_are_merged_in_the_background_every_two_seconds(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    await teach(counted, WS, Label.SPAM, 1, 2)
    knowledge = knowledge_of(store, counted, clock)
    before = await knowledge.evidence(WS)
    generation = before.own.generation
    await teach(counted, WS, Label.HAM, 2, 3)  # another process's teaching

    clock.advance(2)
    served = await knowledge.evidence(WS)  # not waiting for the refresh
    await knowledge.settled()
    after = await knowledge.evidence(WS)

    assert served.own is before.own
    assert (WS, generation) in counted.asked
    assert after.own.tokens == {1: pack(1, 0), 2: pack(1, 1), 3: pack(0, 1)}
    assert (after.own.spam_messages, after.own.ham_messages) == (1, 1)
    assert after.instance.tokens == after.own.tokens


async def test_a_token_fallen_to_zero_is_dropped(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    await seed(store)
    sub = submission(1)
    await store.submissions.commit(plan(sub))
    await store.spam.confirm(sub.submission_id, Lesson(sub.workspace_id, Label.SPAM, (5, 6)))
    await teach(counted, sub.workspace_id, Label.HAM, 6)
    knowledge = knowledge_of(store, counted, clock)
    assert set((await knowledge.evidence(sub.workspace_id)).own.tokens) == {5, 6}

    await store.spam.confirm(sub.submission_id, Lesson(sub.workspace_id, Label.HAM, (5, 6)))
    event = deletion_event("evt_gone", sub, clock.now())
    lesson = Lesson(sub.workspace_id, Label.HAM, (5, 6))
    await store.submissions.erase(Erasure(sub.submission_id, event, lesson))
    knowledge.invalidate(sub.workspace_id)
    after = await knowledge.evidence(sub.workspace_id)

    assert after.own.tokens == {6: pack(0, 1)}
    assert after.instance.tokens == {6: pack(0, 1)}


async def test_an_invalidation_refreshes_at_once(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    await teach(counted, WS, Label.SPAM, 1)
    knowledge = knowledge_of(store, counted, clock)
    await knowledge.evidence(WS)
    await teach(counted, WS, Label.HAM, 1)

    knowledge.invalidate(WS)
    now = await knowledge.evidence(WS)

    assert now.own.tokens == {1: pack(1, 1)}
    assert now.instance.tokens == {1: pack(1, 1)}


async def test_a_scope_is_loaded_whole_every_ten_minutes(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    await teach(counted, WS, Label.SPAM, 1)
    knowledge = knowledge_of(store, counted, clock)
    await knowledge.evidence(WS)

    for _ in range(300):  # ten minutes of submissions, two seconds apart
        clock.advance(2)
        await knowledge.evidence(WS)
        await knowledge.settled()

    full_loads = [asked for asked in counted.asked if asked == (WS, 0)]
    assert len(full_loads) == 2
    assert len([asked for asked in counted.asked if asked[0] == WS]) == 301


async def test_memory_stays_within_the_budget_least_recently_used_first(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    # A budget of 12: each scope keeps at most 6, its most used; the instance's 6 and
    # two workspaces' 3 fit, not three.
    await teach(counted, WS, Label.SPAM, 1, 2, 3)
    await teach(counted, OTHER, Label.SPAM, 11, 12, 13)
    await teach(counted, THIRD, Label.SPAM, 21, 22, 23)
    await teach(counted, THIRD, Label.HAM, 21, 22)
    knowledge = knowledge_of(store, counted, clock, budget=12)

    instance = (await knowledge.evidence(WS)).instance
    await knowledge.evidence(OTHER)
    await knowledge.evidence(THIRD)  # WS was used least recently: it goes
    counted.asked.clear()
    await knowledge.evidence(OTHER)
    await knowledge.evidence(WS)

    assert len(instance.tokens) == 6
    assert {21, 22} <= set(instance.tokens)
    assert knowledge.tokens_held == 12
    assert counted.asked == [(WS, 0)]


async def test_a_store_that_cannot_answer_leaves_the_workspace_untaught_for_now(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    await teach(counted, WS, Label.SPAM, 1)
    knowledge = knowledge_of(store, counted, clock)
    counted.down = True

    blind = await knowledge.evidence(WS)
    counted.down = False
    seen = await knowledge.evidence(WS)

    assert blind.own.messages == 0
    assert seen.own.tokens == {1: pack(1, 0)}


async def test_a_refresh_that_fails_keeps_what_is_held(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    await teach(counted, WS, Label.SPAM, 1)
    knowledge = knowledge_of(store, counted, clock)
    held = (await knowledge.evidence(WS)).own
    counted.down = True

    clock.advance(2)
    await knowledge.evidence(WS)
    await knowledge.settled()
    knowledge.invalidate(WS)

    assert (await knowledge.evidence(WS)).own is held


async def test_submissions_arriving_together_share_one_first_load(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    await teach(counted, WS, Label.SPAM, 1)
    knowledge = knowledge_of(store, counted, clock)

    seen = await asyncio.gather(*(knowledge.evidence(WS) for _ in range(5)))

    assert all(e.own.tokens == {1: pack(1, 0)} for e in seen)
    assert counted.asked.count((WS, 0)) == 1


async def test_more_changes_than_a_delta_carries_load_the_scope_whole(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    # A budget of 8: a scope keeps 4, so a delta of 4 tokens may have left some out.
    await teach(counted, WS, Label.SPAM, 1)
    knowledge = knowledge_of(store, counted, clock, budget=8)
    await knowledge.evidence(WS)
    await teach(counted, WS, Label.HAM, 2, 3, 4, 5, 6)

    knowledge.invalidate(WS)
    after = await knowledge.evidence(WS)

    assert counted.asked.count((WS, 0)) == 2
    assert len(after.own.tokens) == 4
    assert after.own.ham_messages == 1


async def test_a_store_gone_back_is_loaded_whole(counted: Counted, clock: FakeClock) -> None:
    # Emptied (a restored backup, a test's fresh tables): its generations start again.
    await teach(counted, WS, Label.SPAM, 1)
    await teach(counted, WS, Label.SPAM, 2)
    fresh = InMemoryStore()
    knowledge = SpamKnowledge(counted, fresh.secrets, clock)
    await knowledge.evidence(WS)
    counted.inner = fresh.spam
    await fresh.spam.seed([Lesson(WS, Label.HAM, (9,))])

    knowledge.invalidate(WS)
    after = await knowledge.evidence(WS)

    assert after.own.tokens == {9: pack(0, 1)}


async def test_a_delta_adds_no_token_past_a_scopes_share(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    # A budget of 8: a scope keeps 4. A delta of 3 fits in what a delta carries, but not
    # beside the 3 held: it updates what is held, and adds new tokens only while there
    # is room (the next full load keeps the most used).
    await teach(counted, WS, Label.SPAM, 1, 2, 3)
    knowledge = knowledge_of(store, counted, clock, budget=8)
    await knowledge.evidence(WS)
    await teach(counted, WS, Label.HAM, 3, 4, 5)

    knowledge.invalidate(WS)
    after = await knowledge.evidence(WS)

    assert len(after.own.tokens) == 4
    assert len(after.instance.tokens) == 4
    assert after.own.tokens[3] == pack(1, 1)
    assert knowledge.tokens_held <= 8


async def test_many_workspaces_that_taught_nothing_stay_within_the_budget(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    # Each workspace held costs memory even with no token (about what 4 tokens do): an
    # instance of thousands of forms' workspaces must not keep every one.
    knowledge = knowledge_of(store, counted, clock, budget=40)
    for number in range(1000):
        await knowledge.evidence(f"ws_{number}")
    counted.asked.clear()

    await knowledge.evidence("ws_0")  # used least recently: it was dropped
    await knowledge.evidence("ws_999")  # used last: still held

    assert counted.asked == [("ws_0", 0)]


async def test_the_words_scoring_remembers_count_in_the_budget(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    # The classifier remembers each word's f beside the statistics it scored with
    # (Statistics.word_memo): as many words as visitors send, up to its own cap per
    # scope. Held across many workspaces, they must count in the process's budget.
    await teach(counted, WS, Label.SPAM, 1, 2, 3, 4, 5)
    await teach(counted, OTHER, Label.SPAM, 11, 12, 13, 14, 15)
    knowledge = knowledge_of(store, counted, clock, budget=100)
    other = (await knowledge.evidence(OTHER)).own
    own = (await knowledge.evidence(WS)).own
    for n in range(45):  # as judge_words does
        own.word_memo[f"word{n}"] = 0.5
        other.word_memo[f"word{n}"] = 0.5
    counted.asked.clear()

    await knowledge.evidence(OTHER)
    await knowledge.evidence(WS)  # 20 tokens and 90 words: OTHER, used least recently, goes
    held = knowledge.tokens_held + knowledge.words_held
    await knowledge.evidence(OTHER)

    assert held == 15 + 45
    assert counted.asked == [(OTHER, 0)]


async def test_a_scopes_words_past_the_budget_are_forgotten(
    store: InMemoryStore, counted: Counted, clock: FakeClock
) -> None:
    await teach(counted, WS, Label.SPAM, 1)
    knowledge = knowledge_of(store, counted, clock, budget=100)
    own = (await knowledge.evidence(WS)).own
    for n in range(200):
        own.word_memo[f"word{n}"] = 0.5

    again = (await knowledge.evidence(WS)).own

    assert again is own
    assert len(own.word_memo) == 0
    assert knowledge.words_held == 0
