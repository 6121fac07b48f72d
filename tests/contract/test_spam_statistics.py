"""The spam filter's statistics in every store (ports/spam_statistics.py): seeding, what
changed since a generation (zero rows included, so that a process drops them), the most
used tokens first under a limit, the summary, the order of teaching that changes
nothing, and the rule for untouched submissions that a triage in between overrides."""

from __future__ import annotations

from datetime import timedelta

import pytest
from attrs import evolve

from intake.domain.model import SubmissionStatus
from intake.domain.spam.model import INSTANCE, Label, Lesson, unpack
from intake.domain.triage import deletion_event
from intake.ports.spam_statistics import Settlement, SpamSummary
from intake.ports.store import Store
from intake.ports.triage import Erasure
from tests.contract.builders import T0, WORKSPACE_ID, seed, submission
from tests.contract.spam_lessons import EVERYTHING, expected, lesson, snapshot
from tests.contract.test_triage import committed, release_of

pytestmark = pytest.mark.anyio

SPAM = SubmissionStatus.SPAM
ACCEPTED = SubmissionStatus.ACCEPTED
OTHER = "ws_2"


async def test_an_unknown_scope_knows_nothing(store: Store) -> None:
    change = await store.spam.changes("ws_none", 0, 10)

    assert change.since == 0
    assert change.statistics.messages == 0
    assert dict(change.statistics.tokens) == {}
    assert change.statistics.generation == 0
    assert await store.spam.summary("ws_none") == SpamSummary(0, 0, 0, 0, 0, 0)


async def test_seeding_counts_each_workspace_and_the_instance(store: Store) -> None:
    ours = [lesson(1, Label.SPAM), lesson(2, Label.HAM), lesson(3, Label.HAM)]
    theirs = [lesson(4, Label.SPAM, OTHER)]

    assert await store.spam.seed([*ours, *theirs]) == 4
    assert await store.spam.seed([]) == 0

    assert await snapshot(store, WORKSPACE_ID) == expected(ours)
    assert await snapshot(store, OTHER) == expected(theirs)
    assert await snapshot(store, INSTANCE) == expected([*ours, *theirs])
    summary = await store.spam.summary(WORKSPACE_ID)
    assert summary == SpamSummary(
        1, 2, len(expected(ours)[2]), 2, 2, len(expected([*ours, *theirs])[2])
    )


async def test_the_order_of_teaching_does_not_change_the_result(store: Store) -> None:
    labels = [Label.SPAM, Label.HAM, Label.SPAM, Label.HAM, Label.HAM]
    ours = [lesson(n, label) for n, label in enumerate(labels)]
    theirs = [lesson(n, label, OTHER) for n, label in enumerate(labels)]

    for each in ours:
        await store.spam.seed([each])
    await store.spam.seed(theirs[::-1][:2])
    await store.spam.seed(theirs[::-1][2:])

    assert await snapshot(store, WORKSPACE_ID) == await snapshot(store, OTHER)


async def test_changes_since_a_generation_hold_the_changed_tokens_and_the_zeroed(
    store: Store,
) -> None:
    await seed(store)
    sub = submission(1)
    await committed(store, sub)
    await store.spam.seed([Lesson(WORKSPACE_ID, Label.HAM, (1, 2))])
    first = (await store.spam.changes(WORKSPACE_ID, 0, EVERYTHING)).statistics.generation

    await store.spam.confirm(sub.submission_id, Lesson(WORKSPACE_ID, Label.SPAM, (2, 3)))
    second = await store.spam.changes(WORKSPACE_ID, first, EVERYTHING)
    await store.submissions.mark_spam(sub.submission_id)  # no lesson: nothing changes
    assert (await store.spam.changes(WORKSPACE_ID, 0, 1)).statistics.generation == (
        second.statistics.generation
    )
    await store.spam.seed([Lesson(WORKSPACE_ID, Label.HAM, (5,))])
    erasure = Erasure(
        sub.submission_id,
        deletion_event("evt_gone", sub, T0),
        Lesson(WORKSPACE_ID, Label.SPAM, (2, 3)),
    )
    await store.submissions.erase(erasure)
    third = await store.spam.changes(WORKSPACE_ID, second.statistics.generation, EVERYTHING)
    full = await store.spam.changes(WORKSPACE_ID, 0, EVERYTHING)

    assert second.since == first
    assert second.statistics.generation > first
    assert {t: unpack(p) for t, p in second.statistics.tokens.items()} == {2: (1, 1), 3: (1, 0)}
    assert (second.statistics.spam_messages, second.statistics.ham_messages) == (1, 1)
    assert third.statistics.generation == second.statistics.generation + 2
    assert {t: unpack(p) for t, p in third.statistics.tokens.items()} == {
        2: (0, 1),
        3: (0, 0),  # zeroed: listed, so that a process drops it
        5: (0, 1),
    }
    assert {t: unpack(p) for t, p in full.statistics.tokens.items()} == {
        1: (0, 1),
        2: (0, 1),
        5: (0, 1),
    }
    nothing_new = await store.spam.changes(WORKSPACE_ID, full.statistics.generation, 10)
    assert dict(nothing_new.statistics.tokens) == {}


async def test_a_limit_keeps_the_most_used_tokens(store: Store) -> None:
    await store.spam.seed([Lesson(WORKSPACE_ID, Label.SPAM, (10, 20, 30))])
    await store.spam.seed([Lesson(WORKSPACE_ID, Label.HAM, (20, 30))])
    await store.spam.seed([Lesson(WORKSPACE_ID, Label.HAM, (30,))])

    two = await store.spam.changes(WORKSPACE_ID, 0, 2)
    delta = await store.spam.changes(WORKSPACE_ID, 1, 1)

    assert {t: unpack(p) for t, p in two.statistics.tokens.items()} == {30: (1, 2), 20: (1, 1)}
    assert two.statistics.messages == 3
    assert list(delta.statistics.tokens) == [30]
    with pytest.raises(ValueError, match="limit"):
        await store.spam.changes(WORKSPACE_ID, 0, 0)


async def test_untaught_lists_the_oldest_accepted_and_spam_that_teach_nothing(
    store: Store,
) -> None:
    await seed(store)
    subs = [
        submission(1, status=SPAM),
        submission(2),
        submission(3, status=SubmissionStatus.UNVERIFIED),
        submission(4),
        submission(5),
        submission(6, created_at=T0 + timedelta(days=2)),
        submission(7, data={}),  # a forward-only form's, its data erased once forwarded
    ]
    for sub in subs:
        await committed(store, sub)
    await store.spam.confirm(subs[3].submission_id, lesson(4, Label.HAM))
    cutoff = T0 + timedelta(days=1)

    due = await store.spam.untaught(cutoff, 10)
    first = await store.spam.untaught(cutoff, 1)

    assert [s.submission_id for s in due] == [subs[n].submission_id for n in (0, 1, 4)]
    assert due[0] == subs[0]
    assert first == due[:1]


async def test_settling_teaches_only_what_a_triage_left_untouched(store: Store) -> None:
    await seed(store)
    subs = [submission(1, status=SPAM), submission(2), submission(3), submission(4)]
    for sub in subs:
        await committed(store, sub)
    due = await store.spam.untaught(T0 + timedelta(days=1), 10)
    assert len(due) == 4
    # In between: one released, one confirmed, then the sweep settles what it read.
    await store.submissions.release(evolve(release_of(subs[0]), lesson=lesson(1, Label.HAM)))
    await store.spam.confirm(subs[1].submission_id, lesson(2, Label.SPAM))
    rule = {SPAM: Label.SPAM, ACCEPTED: Label.HAM}
    settlements = [Settlement(s, lesson(n, rule[s.status])) for n, s in enumerate(due, start=1)]

    assert await store.spam.settle(settlements) == 2
    assert await store.spam.settle(settlements) == 0
    assert await store.spam.settle([]) == 0

    assert [await store.spam.taught(s.submission_id) for s in subs] == [
        Label.HAM,
        Label.SPAM,
        Label.HAM,
        Label.HAM,
    ]
    taught = [
        lesson(1, Label.HAM),
        lesson(2, Label.SPAM),
        lesson(3, Label.HAM),
        lesson(4, Label.HAM),
    ]
    assert await snapshot(store, WORKSPACE_ID) == expected(taught)
    assert await store.spam.untaught(T0 + timedelta(days=1), 10) == []
