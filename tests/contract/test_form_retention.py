"""A form's retention and an erasure's search, in every store: `erase_expired` erases a
form's submissions of every status old enough, with their delivered outbox rows, gives
their files' bytes back, and never touches another form's or one whose event is still on
its way; `with_address` finds the submissions that hold an address, whatever its case."""

from __future__ import annotations

from datetime import timedelta

import pytest
from attrs import evolve

from intake.adapters.delivery_rules import delivery_id
from intake.domain.deliveries import DestinationKind
from intake.domain.model import Submission, SubmissionStatus
from intake.ports.store import Store
from intake.ports.submissions import ErasedBatch
from tests.contract.builders import (
    FORM_ID,
    T0,
    WORKSPACE_ID,
    endpoint,
    event_for,
    form,
    plan,
    record,
    seed,
    stored,
    submission,
)

pytestmark = pytest.mark.anyio

CUTOFF = T0 + timedelta(days=1)
LATER = CUTOFF + timedelta(days=1)
MICROSECOND = timedelta(microseconds=1)
OTHER_FORM = form("frm_2", "ws_1", "pk0form2")


async def commit(store: Store, *subs: Submission) -> None:
    for sub in subs:
        assert type(await store.submissions.commit(plan(sub))).__name__ == "Committed"


async def publish_all(store: Store) -> None:
    while await store.deliveries.fan_out(LATER, 100):
        pass


async def test_a_forms_old_submissions_of_every_status_go_and_the_rest_stays(
    store: Store,
) -> None:
    await seed(store, form(), OTHER_FORM)
    old = [
        submission(n, status=status, files=1, created_at=CUTOFF - timedelta(days=n))
        for n, status in enumerate(SubmissionStatus, start=1)
    ]
    at_cutoff = submission(7, created_at=CUTOFF)
    young = submission(8, files=1, created_at=CUTOFF + MICROSECOND)
    other = submission(9, form_id="frm_2", created_at=CUTOFF - timedelta(days=30))
    await commit(store, *old, at_cutoff, young, other)
    await publish_all(store)

    erased = await store.submissions.erase_expired("frm_1", CUTOFF, 100)

    gone = [*old, at_cutoff]
    assert sorted(erased.submission_ids) == sorted(s.submission_id for s in gone)
    assert sorted(erased.file_keys) == sorted(f.key for s in old for f in s.files)
    assert await stored(store) == [young]
    assert await stored(store, "frm_2") == [other]
    left = {row.event.submission_id for row in await store.submissions.outbox()}
    assert left == {young.submission_id, other.submission_id}
    assert await store.workspaces.storage_used(WORKSPACE_ID) == young.files[0].size


async def test_their_idempotency_records_go_with_them(store: Store) -> None:
    await seed(store)
    old = submission(1, created_at=CUTOFF - timedelta(days=2))
    kept = submission(2, created_at=CUTOFF + MICROSECOND)
    public = record(old, "k-old", f"public:{FORM_ID}:203.0.113.0")
    server = record(kept, "k-kept", f"server:{FORM_ID}")
    for sub, key in ((old, public), (kept, server)):
        committed = await store.submissions.commit(plan(sub, idempotency=key))
        assert type(committed).__name__ == "Committed"
    await publish_all(store)

    await store.submissions.erase_expired(FORM_ID, CUTOFF, 10)

    since = T0 - timedelta(days=30)
    assert await store.submissions.find_idempotency(public.scope, public.key, since) is None
    found = await store.submissions.find_idempotency(server.scope, server.key, since)
    assert found is not None
    assert found.submission_id == kept.submission_id


async def test_an_event_still_on_its_way_keeps_its_submission(store: Store) -> None:
    await seed(store)
    await store.destinations.add_endpoint(endpoint(created_at=None))  # there before it
    unpublished = submission(1, created_at=CUTOFF - timedelta(days=9))
    await commit(store, unpublished)
    assert await store.submissions.erase_expired("frm_1", CUTOFF, 10) == ErasedBatch((), ())

    await publish_all(store)  # now a pending delivery
    assert await store.submissions.erase_expired("frm_1", CUTOFF, 10) == ErasedBatch((), ())
    assert await stored(store) == [unpublished]

    hook = endpoint().endpoint_id
    made = delivery_id(event_for(unpublished).event_id, DestinationKind.WEBHOOK, hook)
    await store.deliveries.record_success(made, LATER)
    erased = await store.submissions.erase_expired("frm_1", CUTOFF, 10)
    assert erased.submission_ids == (unpublished.submission_id,)
    assert await stored(store) == []


async def test_the_oldest_go_first_in_batches(store: Store) -> None:
    await seed(store)
    subs = [submission(n, created_at=CUTOFF - timedelta(hours=n)) for n in range(1, 6)]
    await commit(store, *subs)
    await publish_all(store)

    batches = [await store.submissions.erase_expired("frm_1", CUTOFF, 2) for _ in range(4)]

    oldest_first = [s.submission_id for s in reversed(subs)]
    assert [b.submission_ids for b in batches] == [
        tuple(oldest_first[0:2]),
        tuple(oldest_first[2:4]),
        tuple(oldest_first[4:]),
        (),
    ]


async def test_a_limit_below_one_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="limit"):
        await store.submissions.erase_expired("frm_1", CUTOFF, 0)


async def test_the_candidates_hold_the_address_in_a_field_or_the_reply_to(store: Store) -> None:
    other_workspace = form("frm_3", "ws_2", "pk0form3")
    await seed(store, form(), OTHER_FORM, other_workspace)
    in_field = evolve(
        submission(1), reply_to=None, data={"contact": {"emails": ["  Ada@Example.COM "]}}
    )
    in_reply_to = evolve(submission(2), reply_to="ADA@example.com", data={"note": "hi"})
    other_form = evolve(submission(3, form_id="frm_2"), data={"email": "ada@example.com"})
    elsewhere = evolve(
        submission(4, form_id="frm_3", workspace_id="ws_2"), data={"email": "ada@example.com"}
    )
    unrelated = evolve(submission(5), data={"email": "bob@example.com"})
    await commit(store, in_field, in_reply_to, other_form, elsewhere, unrelated)

    found = await store.submissions.with_address(WORKSPACE_ID, ["ada@example.com"])

    assert [s.submission_id for s in found] == [
        in_field.submission_id,
        in_reply_to.submission_id,
        other_form.submission_id,
    ]
    assert await store.submissions.with_address(WORKSPACE_ID, []) == []


async def test_a_search_for_an_address_takes_its_wildcards_literally(store: Store) -> None:
    await seed(store)
    underscore = evolve(submission(1), reply_to=None, data={"email": "a_b@example.com"})
    lookalike = evolve(submission(2), reply_to=None, data={"email": "axb@example.com"})
    await commit(store, underscore, lookalike)

    found = await store.submissions.with_address(WORKSPACE_ID, ["a_b@example.com"])

    assert [s.submission_id for s in found] == [underscore.submission_id]
