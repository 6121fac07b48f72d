"""Spam retention, in every store: `erase_flagged` erases the spam and unverified
submissions old enough, with their delivered outbox rows, gives their files' bytes back
to the workspace, and never touches one whose event is still on its way."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from attrs import evolve

from intake.adapters.delivery_rules import delivery_id
from intake.domain.deliveries import DeliveryState, DestinationKind
from intake.domain.model import Submission, SubmissionStatus
from intake.ports.store import Store
from intake.ports.submissions import ErasedBatch
from tests.contract.builders import (
    T0,
    WORKSPACE_ID,
    endpoint,
    event_for,
    form,
    plan,
    seed,
    stored,
    submission,
)

pytestmark = pytest.mark.anyio

SPAM = SubmissionStatus.SPAM
UNVERIFIED = SubmissionStatus.UNVERIFIED
ACCEPTED = SubmissionStatus.ACCEPTED
CUTOFF = T0 + timedelta(days=1)
LATER = CUTOFF + timedelta(days=1)
MICROSECOND = timedelta(microseconds=1)


async def commit(store: Store, *subs: Submission) -> None:
    for sub in subs:
        assert type(await store.submissions.commit(plan(sub))).__name__ == "Committed"


async def publish_all(store: Store) -> None:
    """The relay's fan-out of every row (into no delivery, where no endpoint wants it)."""
    while await store.deliveries.fan_out(LATER, 100):
        pass


def keys(*subs: Submission) -> tuple[str, ...]:
    return tuple(f.key for sub in subs for f in sub.files)


async def erase_all(store: Store, limit: int = 100) -> ErasedBatch:
    return await store.submissions.erase_flagged(CUTOFF, limit)


async def test_old_spam_and_unverified_go_with_their_events_and_the_rest_stays(
    store: Store,
) -> None:
    await seed(store)
    spam = submission(1, status=SPAM, files=2, created_at=CUTOFF - timedelta(days=9))
    unverified = submission(2, status=UNVERIFIED, files=1, created_at=CUTOFF)
    accepted = submission(3, status=ACCEPTED, files=1, created_at=CUTOFF - timedelta(days=9))
    young = submission(4, status=SPAM, files=1, created_at=CUTOFF + MICROSECOND)
    await commit(store, spam, unverified, accepted, young)
    await publish_all(store)

    erased = await erase_all(store)

    assert sorted(erased.submission_ids) == sorted([spam.submission_id, unverified.submission_id])
    assert sorted(erased.file_keys) == sorted(keys(spam, unverified))
    assert await stored(store) == [accepted, young]
    assert await store.submissions.get(spam.submission_id) is None
    left = {row.event.submission_id for row in await store.submissions.outbox()}
    assert left == {accepted.submission_id, young.submission_id}
    assert await store.submissions.existing([spam.submission_id, unverified.submission_id]) == set()


async def test_the_bytes_of_erased_files_are_given_back(store: Store) -> None:
    await seed(store)
    old = submission(1, status=SPAM, files=2, created_at=CUTOFF)
    kept = submission(2, status=ACCEPTED, files=1, created_at=CUTOFF)
    await commit(store, old, kept)
    await publish_all(store)

    await erase_all(store)

    assert await store.workspaces.storage_used(WORKSPACE_ID) == sum(f.size for f in kept.files)


async def test_an_unpublished_event_keeps_its_submission(store: Store) -> None:
    await seed(store)
    waiting = submission(1, status=SPAM, files=1, created_at=CUTOFF - timedelta(days=400))
    await commit(store, waiting)

    assert await erase_all(store) == ErasedBatch((), ())

    assert await stored(store) == [waiting]


@pytest.mark.parametrize("outcome", ["pending", "dead", "delivered"])
async def test_an_undelivered_event_keeps_its_submission(store: Store, outcome: str) -> None:
    await seed(store)
    sub = submission(1, status=SPAM, created_at=CUTOFF - timedelta(days=40))
    await store.destinations.add_endpoint(endpoint(include_flagged=True, created_at=None))
    await commit(store, sub)
    await publish_all(store)
    made = delivery_id(event_for(sub).event_id, DestinationKind.WEBHOOK, endpoint().endpoint_id)
    if outcome == "dead":
        await store.deliveries.record_failure(made, LATER, "gone", None)
    elif outcome == "delivered":
        await store.deliveries.record_success(made, LATER)

    erased = await erase_all(store)

    if outcome == "delivered":
        assert erased.submission_ids == (sub.submission_id,)
        assert await stored(store) == []
        assert (await store.deliveries.counts()).delivered == 0  # gone with its row
    else:
        assert erased == ErasedBatch((), ())
        assert await stored(store) == [sub]
        [state] = {d.state for d in await store.deliveries.list_deliveries()}
        assert state is DeliveryState(outcome)


async def test_erasing_takes_the_oldest_first_in_batches(store: Store) -> None:
    await seed(store)
    subs = [
        submission(n, status=SPAM, files=n % 2, created_at=CUTOFF - timedelta(hours=n))
        for n in range(1, 6)
    ]
    await commit(store, *subs)
    await publish_all(store)

    batches = [await erase_all(store, limit=2) for _ in range(4)]

    oldest_first = [s.submission_id for s in reversed(subs)]
    assert [b.submission_ids for b in batches] == [
        tuple(oldest_first[0:2]),
        tuple(oldest_first[2:4]),
        tuple(oldest_first[4:]),
        (),
    ]
    assert await stored(store) == []


async def test_two_erases_at_once_take_each_submission_once(store: Store) -> None:
    await seed(store)
    subs = [submission(n, status=SPAM, files=1, created_at=CUTOFF) for n in range(1, 8)]
    await commit(store, *subs)
    await publish_all(store)

    async def until_done() -> list[str]:
        erased: list[str] = []
        while batch := (await erase_all(store, limit=2)).submission_ids:
            erased += batch
        return erased

    first, second = await asyncio.gather(until_done(), until_done())

    assert sorted(first + second) == sorted(s.submission_id for s in subs)
    assert await store.workspaces.storage_used(WORKSPACE_ID) == 0


async def test_other_workspaces_keep_their_bytes(store: Store) -> None:
    other = evolve(form("frm_2", "ws_2", "pk0form2"))
    await seed(store, form(), other)
    mine = submission(1, status=SPAM, files=1, created_at=CUTOFF)
    theirs = submission(2, files=1, form_id="frm_2", workspace_id="ws_2", created_at=CUTOFF)
    await commit(store, mine, theirs)
    await publish_all(store)

    await erase_all(store)

    assert await store.workspaces.storage_used(WORKSPACE_ID) == 0
    assert await store.workspaces.storage_used("ws_2") == theirs.files[0].size


async def test_a_limit_below_one_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="limit"):
        await store.submissions.erase_flagged(CUTOFF, 0)
