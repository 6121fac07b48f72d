"""Every triage teaches, in every store (ports/triage.py, ports/spam_statistics.py): a
release teaches ham, a mark as spam spam, twice counts once, a reversal unlearns before
it learns, a confirmation teaches the present status, an erasure takes the submission's
contribution away; each in the workspace's scope and the instance's."""

from __future__ import annotations

import pytest
from attrs import evolve

from intake.domain.model import Submission, SubmissionStatus
from intake.domain.spam.model import INSTANCE, Label
from intake.ports.store import Store
from tests.contract.builders import WORKSPACE_ID, seed, submission
from tests.contract.spam_lessons import Snapshot, expected, lesson, snapshot
from tests.contract.test_triage import committed, erasure_of, events_of, release_of

pytestmark = pytest.mark.anyio

SPAM = SubmissionStatus.SPAM
ACCEPTED = SubmissionStatus.ACCEPTED
NOTHING: Snapshot = (0, 0, {})


async def stored(store: Store, n: int, status: SubmissionStatus = ACCEPTED) -> Submission:
    sub = submission(n, status=status)
    await committed(store, sub)
    return sub


async def test_a_commit_teaches_nothing(store: Store) -> None:
    await seed(store)
    sub = await stored(store, 1)

    assert await store.spam.taught(sub.submission_id) is None
    assert await snapshot(store, WORKSPACE_ID) == NOTHING
    assert await snapshot(store, INSTANCE) == NOTHING


async def test_marking_spam_teaches_spam_once_however_often(store: Store) -> None:
    await seed(store)
    sub = await stored(store, 1)
    spam = lesson(1, Label.SPAM)

    await store.submissions.mark_spam(sub.submission_id, spam)
    marked = await store.submissions.mark_spam(sub.submission_id, spam)

    assert marked is not None
    assert marked.status is SPAM
    assert await store.spam.taught(sub.submission_id) is Label.SPAM
    assert await snapshot(store, WORKSPACE_ID) == expected([spam])
    assert await snapshot(store, INSTANCE) == expected([spam])


async def test_a_release_teaches_ham_once_and_still_queues_its_event(store: Store) -> None:
    await seed(store)
    sub = await stored(store, 1, SPAM)
    ham = lesson(1, Label.HAM)

    first = await store.submissions.release(evolve(release_of(sub, 1), lesson=ham))
    again = await store.submissions.release(evolve(release_of(sub, 2), lesson=ham))

    assert first is not None
    assert first.queued
    assert again is not None
    assert not again.changed
    assert await store.spam.taught(sub.submission_id) is Label.HAM
    assert await snapshot(store, WORKSPACE_ID) == expected([ham])
    assert len(await events_of(store, sub)) == 2  # flagged, then created once


async def test_a_release_of_an_accepted_submission_teaches_ham(store: Store) -> None:
    await seed(store)
    sub = await stored(store, 1)

    released = await store.submissions.release(evolve(release_of(sub), lesson=lesson(1, Label.HAM)))

    assert released is not None
    assert not released.changed
    assert await store.spam.taught(sub.submission_id) is Label.HAM
    assert await snapshot(store, INSTANCE) == expected([lesson(1, Label.HAM)])


async def test_the_order_decides_the_label_not_the_lesson(store: Store) -> None:
    await seed(store)
    sub = await stored(store, 1)

    await store.submissions.mark_spam(sub.submission_id, lesson(1, Label.HAM))

    assert await store.spam.taught(sub.submission_id) is Label.SPAM
    assert await snapshot(store, WORKSPACE_ID) == expected([lesson(1, Label.SPAM)])


async def test_a_reversal_unlearns_before_it_learns(store: Store) -> None:
    await seed(store)
    subs = [await stored(store, n) for n in (1, 2)]
    await store.submissions.mark_spam(subs[0].submission_id, lesson(1, Label.SPAM))
    await store.submissions.mark_spam(subs[1].submission_id, lesson(2, Label.SPAM))

    released = await store.submissions.release(
        evolve(release_of(subs[0]), lesson=lesson(1, Label.HAM))
    )

    assert released is not None
    assert released.changed
    assert await store.spam.taught(subs[0].submission_id) is Label.HAM
    want = expected([lesson(1, Label.HAM), lesson(2, Label.SPAM)])
    assert await snapshot(store, WORKSPACE_ID) == want
    assert await snapshot(store, INSTANCE) == want


async def test_triage_without_a_lesson_leaves_the_statistics_alone(store: Store) -> None:
    await seed(store)
    sub = await stored(store, 1)
    await store.submissions.mark_spam(sub.submission_id, lesson(1, Label.SPAM))

    await store.submissions.release(release_of(sub))
    await store.submissions.mark_spam(sub.submission_id)

    assert await store.spam.taught(sub.submission_id) is Label.SPAM
    assert await snapshot(store, WORKSPACE_ID) == expected([lesson(1, Label.SPAM)])


async def test_a_confirmation_teaches_the_status_once_and_changes_nothing_else(
    store: Store,
) -> None:
    await seed(store)
    sub = await stored(store, 1)
    ham = lesson(1, Label.HAM)
    events = await events_of(store, sub)

    assert await store.spam.confirm(sub.submission_id, ham)
    assert await store.spam.confirm(sub.submission_id, ham)

    assert await store.submissions.get(sub.submission_id) == sub
    assert await events_of(store, sub) == events
    assert await store.spam.taught(sub.submission_id) is Label.HAM
    assert await snapshot(store, WORKSPACE_ID) == expected([ham])
    assert not await store.spam.confirm(submission(9).submission_id, ham)


async def test_a_confirmation_of_a_status_changed_since_teaches_nothing(store: Store) -> None:
    # Read accepted, then marked as spam by another triage before the confirmation:
    # the status the confirmation read is gone, and the mark's lesson stays.
    await seed(store)
    sub = await stored(store, 1)
    await store.submissions.mark_spam(sub.submission_id, lesson(1, Label.SPAM))

    assert await store.spam.confirm(sub.submission_id, lesson(1, Label.HAM), if_status=ACCEPTED)

    assert await store.spam.taught(sub.submission_id) is Label.SPAM
    assert await snapshot(store, WORKSPACE_ID) == expected([lesson(1, Label.SPAM)])
    assert await snapshot(store, INSTANCE) == expected([lesson(1, Label.SPAM)])
    assert await store.spam.confirm(sub.submission_id, lesson(1, Label.SPAM), if_status=SPAM)
    assert await snapshot(store, WORKSPACE_ID) == expected([lesson(1, Label.SPAM)])


async def test_an_erasure_takes_the_submissions_contribution_away(store: Store) -> None:
    await seed(store)
    kept, erased = await stored(store, 1), await stored(store, 2)
    await store.submissions.mark_spam(kept.submission_id, lesson(1, Label.SPAM))
    await store.submissions.release(evolve(release_of(erased), lesson=lesson(2, Label.HAM)))

    gone = await store.submissions.erase(
        evolve(erasure_of(erased), lesson=lesson(2, Label.SPAM))  # its label is not read
    )

    assert gone is not None
    assert await store.spam.taught(erased.submission_id) is None
    assert await snapshot(store, WORKSPACE_ID) == expected([lesson(1, Label.SPAM)])
    assert await snapshot(store, INSTANCE) == expected([lesson(1, Label.SPAM)])


async def test_an_erasure_without_a_lesson_leaves_the_statistics_alone(store: Store) -> None:
    # Retention's batch erasures and an erasure of an untaught submission.
    await seed(store)
    sub = await stored(store, 1)
    await store.submissions.mark_spam(sub.submission_id, lesson(1, Label.SPAM))

    await store.submissions.erase(erasure_of(sub))

    assert await snapshot(store, WORKSPACE_ID) == expected([lesson(1, Label.SPAM)])


async def test_learning_then_unlearning_restores_the_statistics(store: Store) -> None:
    await seed(store)
    assert await store.spam.seed([lesson(10, Label.HAM), lesson(11, Label.SPAM)]) == 2
    before = (await snapshot(store, WORKSPACE_ID), await snapshot(store, INSTANCE))
    subs = [await stored(store, n) for n in (1, 2, 3)]
    await store.submissions.mark_spam(subs[0].submission_id, lesson(1, Label.SPAM))
    await store.spam.confirm(subs[1].submission_id, lesson(2, Label.HAM))
    await store.submissions.mark_spam(subs[2].submission_id, lesson(3, Label.SPAM))
    await store.submissions.release(evolve(release_of(subs[2]), lesson=lesson(3, Label.HAM)))

    for n, sub in enumerate(subs, start=1):
        gone = erasure_of(sub, f"evt_deleted{n}")
        await store.submissions.erase(evolve(gone, lesson=lesson(n, Label.HAM)))

    assert (await snapshot(store, WORKSPACE_ID), await snapshot(store, INSTANCE)) == before


async def test_counts_never_fall_below_zero(store: Store) -> None:
    # An erasure whose lesson holds a token its submission never taught (the tokenizer
    # changed in between): that token stays at nothing.
    await seed(store)
    sub = await stored(store, 1)
    await store.submissions.mark_spam(sub.submission_id, lesson(1, Label.SPAM))
    wider = lesson(1, Label.SPAM)
    wider = evolve(wider, hashes=tuple(sorted({*wider.hashes, 424242})))

    await store.submissions.erase(evolve(erasure_of(sub), lesson=wider))
    delta = await store.spam.changes(WORKSPACE_ID, 1, 1000)

    assert await snapshot(store, WORKSPACE_ID) == NOTHING
    assert all(packed == 0 for packed in delta.statistics.tokens.values())
    summary = await store.spam.summary(WORKSPACE_ID)
    assert (summary.spam_messages, summary.ham_messages, summary.tokens) == (0, 0, 0)
