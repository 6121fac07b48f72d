"""A destination gets only the events queued once it was there, in every store: a relay
that starts late, after an owner added a webhook endpoint, a mail recipient and a chat
destination, sends them none of the backlog (relay.md, "One round")."""

from __future__ import annotations

from datetime import timedelta

import pytest

from intake.adapters.delivery_rules import delivery_id
from intake.domain.chat import ChatApp, ChatDestination
from intake.domain.deliveries import DestinationKind
from intake.domain.model import SubmissionStatus
from intake.domain.triage import deletion_event, release_event
from intake.ports.store import Store
from intake.ports.triage import Erasure, Release
from tests.contract.builders import (
    FORM_ID,
    T0,
    endpoint,
    event_for,
    plan,
    recipient,
    seed,
    submission,
)

pytestmark = pytest.mark.anyio

WEBHOOK, EMAIL, CHAT = DestinationKind.WEBHOOK, DestinationKind.EMAIL, DestinationKind.CHAT
RELAY_STARTS = T0 + timedelta(days=2)


def chat(destination_id: str, added: timedelta) -> ChatDestination:
    return ChatDestination(
        destination_id=destination_id,
        form_id=FORM_ID,
        app=ChatApp.SLACK,
        secret=f"https://hooks.slack.com/services/{destination_id}",
        created_at=T0 + added,
    )


async def add_all(store: Store, suffix: str, added: timedelta) -> None:
    """A webhook endpoint, a mail recipient and a chat destination, added at T0 + added."""
    at = T0 + added
    await store.destinations.add_endpoint(endpoint(f"whk_{suffix}", created_at=at))
    await store.destinations.add_recipient(recipient(f"rcp_{suffix}", created_at=at))
    await store.destinations.add_chat(chat(f"chat_{suffix}", added))


async def made(store: Store) -> set[tuple[str, DestinationKind, str]]:
    listed = await store.deliveries.list_deliveries(limit=1_000)
    return {(d.event_id, d.kind, d.destination_id) for d in listed}


def to_all(event_id: str, suffix: str) -> set[tuple[str, DestinationKind, str]]:
    return {
        (event_id, WEBHOOK, f"whk_{suffix}"),
        (event_id, EMAIL, f"rcp_{suffix}"),
        (event_id, CHAT, f"chat_{suffix}"),
    }


async def test_destinations_added_after_an_event_get_none_of_the_backlog(store: Store) -> None:
    await seed(store)
    await add_all(store, "before", -timedelta(hours=1))
    old = submission(1)  # T0 + 1 ms
    await store.submissions.commit(plan(old))
    # Added a day later, while no relay ran; then a new submission; then the relay.
    await add_all(store, "later", timedelta(days=1))
    new = submission(2, created_at=T0 + timedelta(days=1, hours=1))
    await store.submissions.commit(plan(new))

    assert await store.deliveries.fan_out(RELAY_STARTS, 100) == 2

    old_event, new_event = event_for(old).event_id, event_for(new).event_id
    assert await made(store) == (
        to_all(old_event, "before") | to_all(new_event, "before") | to_all(new_event, "later")
    )
    # Every event was taken, so no later round sends the backlog either.
    assert all(row.published_at is not None for row in await store.submissions.outbox(100))
    assert await store.deliveries.fan_out(RELAY_STARTS + timedelta(minutes=1), 100) == 0


async def test_a_destination_added_in_the_events_own_instant_gets_it(store: Store) -> None:
    await seed(store)
    sub = submission(1)
    await store.submissions.commit(plan(sub))
    await add_all(store, "same", sub.created_at - T0)

    await store.deliveries.fan_out(RELAY_STARTS, 100)

    assert await made(store) == to_all(event_for(sub).event_id, "same")


async def test_a_release_or_an_erasure_after_a_destination_was_added_goes_to_it(
    store: Store,
) -> None:
    # The events of a release and an erasure are queued when the owner acts: a
    # destination added between the submission's arrival and then has them.
    await seed(store)
    sub = submission(1, status=SubmissionStatus.SPAM)
    await store.submissions.commit(plan(sub))
    await store.destinations.add_endpoint(
        endpoint("whk_1", include_flagged=True, created_at=T0 + timedelta(hours=1))
    )
    released_at = T0 + timedelta(hours=2)
    release = release_event("evt_release", sub, None, released_at)
    await store.submissions.release(Release(sub.submission_id, release, "2026-01"))
    erasure = deletion_event("evt_deleted", sub, released_at + timedelta(minutes=1))
    await store.submissions.erase(Erasure(sub.submission_id, erasure))

    await store.deliveries.fan_out(RELAY_STARTS, 100)

    assert await made(store) == {
        ("evt_release", WEBHOOK, "whk_1"),
        ("evt_deleted", WEBHOOK, "whk_1"),
    }
    flagged = event_for(sub).event_id
    assert delivery_id(flagged, WEBHOOK, "whk_1") not in {
        d.delivery_id for d in await store.deliveries.list_deliveries(limit=100)
    }
