"""Delivery, in every store: the fan-out of outbox rows into one delivery per
destination, leases, results, parking as dead, retries, the backlog and the relay's
wake-up. What only PostgreSQL has (several relays at once, NOTIFY, index plans) is at the
end."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from attrs import evolve

from intake.adapters import sql_statements as sql
from intake.adapters.delivery_rules import ERROR_LIMIT, delivery_id
from intake.adapters.postgres import PostgresStore
from intake.adapters.sql import claims
from intake.adapters.sqlite import SqliteStore, open_sqlite_store
from intake.adapters.sqlite import dialect_on_use as lite_dialect
from intake.adapters.sqlite.mapping import time_text
from intake.domain.deliveries import Delivery, DeliveryState, DestinationKind
from intake.domain.model import OutboxEvent, SubmissionStatus
from intake.ports.deliveries import Claim, ClaimedDelivery
from intake.ports.store import Store
from intake.ports.submissions import PurgeCounts
from tests.contract.builders import (
    FORM_ID,
    T0,
    endpoint,
    event_for,
    form,
    plan,
    recipient,
    seed,
    submission,
)

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
LEASE = timedelta(minutes=2)
MICROSECOND = timedelta(microseconds=1)
WEBHOOK = DestinationKind.WEBHOOK
EMAIL = DestinationKind.EMAIL
OTHER_FORM = "frm_2"


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form(), form(OTHER_FORM, public_form_key="pk0form2"))
    return store


async def committed(
    store: Store, *ns: int, spam: bool = False, form_id: str = FORM_ID
) -> list[str]:
    """Commits the n-th submissions (spam ones make submission.flagged events); their
    event ids."""
    status = SubmissionStatus.SPAM if spam else SubmissionStatus.ACCEPTED
    events = []
    for n in ns:
        sub = submission(n, status=status, form_id=form_id)
        await store.submissions.commit(plan(sub))
        events.append(event_for(sub).event_id)
    return events


def event_of(n: int, *, spam: bool = False) -> OutboxEvent:
    status = SubmissionStatus.SPAM if spam else SubmissionStatus.ACCEPTED
    return event_for(submission(n, status=status))


def pending(event_id: str, kind: DestinationKind, destination_id: str, at: datetime) -> Delivery:
    """A delivery as the fan-out at `at` makes it."""
    return Delivery(
        delivery_id=delivery_id(event_id, kind, destination_id),
        event_id=event_id,
        kind=kind,
        destination_id=destination_id,
        state=DeliveryState.PENDING,
        attempts=0,
        next_attempt_at=at,
        created_at=at,
    )


async def deliveries(store: Store) -> dict[str, Delivery]:
    return {d.delivery_id: d for d in await store.deliveries.list_deliveries(limit=1_000)}


async def delivery(store: Store, event_id: str, kind: DestinationKind, dest: str) -> Delivery:
    return (await deliveries(store))[delivery_id(event_id, kind, dest)]


async def published_at(store: Store) -> dict[str, datetime | None]:
    return {r.event.event_id: r.published_at for r in await store.submissions.outbox(1_000)}


async def set_published(store: Store, event_id: str, when: datetime | None) -> None:
    """Under the port, in each store's own terms: a relay that died after its inserts
    and before its commit is what a re-run of the fan-out must survive."""
    if isinstance(store, SqliteStore):
        text = None if when is None else time_text(when)

        def update(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE outbox SET published_at = ? WHERE event_id = ?", (text, event_id))

        await store._worker.run(update)
    elif isinstance(store, PostgresStore):
        await store._db.execute(
            "UPDATE outbox SET published_at = %s WHERE event_id = %s", (when, event_id)
        )
    else:
        raise TypeError(f"no way to change the outbox of {store!r}")


async def one_claimed(store: Store, at: datetime = NOW) -> ClaimedDelivery:
    [claimed] = (await store.deliveries.claim_due(at, LEASE, 10)).leased
    return claimed


# Fan-out


async def test_fan_out_makes_one_delivery_per_destination_that_wants_the_event(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint("whk_created"))
    await seeded.destinations.add_endpoint(endpoint("whk_all", include_flagged=True))
    off = endpoint("whk_off", include_flagged=True, disabled_at=T0)
    await seeded.destinations.add_endpoint(off)
    await seeded.destinations.add_recipient(recipient("rcp_1"))
    await seeded.destinations.add_endpoint(endpoint("whk_other", form_id=OTHER_FORM))
    [created] = await committed(seeded, 1)
    [flagged] = await committed(seeded, 2, spam=True)

    assert await seeded.deliveries.fan_out(NOW, 100) == 2

    expected = [
        pending(created, WEBHOOK, "whk_created", NOW),
        pending(created, WEBHOOK, "whk_all", NOW),
        pending(created, EMAIL, "rcp_1", NOW),  # mail for accepted submissions only
        pending(flagged, WEBHOOK, "whk_all", NOW),  # flagged: to those that asked
    ]
    assert await deliveries(seeded) == {d.delivery_id: d for d in expected}
    assert await published_at(seeded) == {created: NOW, flagged: NOW}


async def test_an_event_of_a_form_without_destinations_is_published_with_none(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint("whk_other", form_id=OTHER_FORM))
    [event_id] = await committed(seeded, 1)

    assert await seeded.deliveries.fan_out(NOW, 100) == 1

    assert await deliveries(seeded) == {}
    assert await published_at(seeded) == {event_id: NOW}


async def test_a_flagged_event_no_destination_wants_is_published_with_none(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    await seeded.destinations.add_recipient(recipient())
    [event_id] = await committed(seeded, 1, spam=True)

    assert await seeded.deliveries.fan_out(NOW, 100) == 1

    assert await deliveries(seeded) == {}
    assert await published_at(seeded) == {event_id: NOW}


async def test_fan_out_takes_the_oldest_rows_first_up_to_the_limit(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    # Committed out of order: the time decides, not the order of the commits.
    [third, first, second] = await committed(seeded, 3, 1, 2)

    assert await seeded.deliveries.fan_out(NOW, 2) == 2
    assert await published_at(seeded) == {first: NOW, second: NOW, third: None}

    later = NOW + timedelta(seconds=1)
    assert await seeded.deliveries.fan_out(later, 2) == 1
    assert await seeded.deliveries.fan_out(later, 2) == 0
    assert await published_at(seeded) == {first: NOW, second: NOW, third: later}
    assert len(await deliveries(seeded)) == 3


async def test_a_fan_out_run_again_makes_no_second_delivery(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    await seeded.destinations.add_recipient(recipient())
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    before = await deliveries(seeded)
    # As if the relay had died after writing the deliveries, before its commit.
    await set_published(seeded, event_id, None)

    assert await seeded.deliveries.fan_out(NOW + timedelta(minutes=1), 100) == 1

    assert await deliveries(seeded) == before  # the same ids, nothing new, nothing reset
    assert await published_at(seeded) == {event_id: NOW + timedelta(minutes=1)}


async def test_fan_out_with_nothing_unpublished_takes_nothing(seeded: Store) -> None:
    assert await seeded.deliveries.fan_out(NOW, 100) == 0


# Claiming


async def test_a_claimed_webhook_delivery_comes_with_its_event_and_endpoint(
    seeded: Store,
) -> None:
    hook = endpoint(include_flagged=True)
    await seeded.destinations.add_endpoint(hook)
    [event_id] = await committed(seeded, 1, spam=True)
    await seeded.deliveries.fan_out(NOW, 100)

    claimed = (await seeded.deliveries.claim_due(NOW, LEASE, 10)).leased

    assert claimed == [
        ClaimedDelivery(
            delivery=pending(event_id, WEBHOOK, hook.endpoint_id, NOW),
            event=event_of(1, spam=True),
            endpoint=hook,
            recipient=None,
            leased_until=NOW + LEASE,
        )
    ]


async def test_a_claimed_mail_delivery_comes_with_its_recipient(seeded: Store) -> None:
    to = recipient()
    await seeded.destinations.add_recipient(to)
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)

    claimed = await one_claimed(seeded)

    assert claimed == ClaimedDelivery(
        delivery=pending(event_id, EMAIL, to.recipient_id, NOW),
        event=event_of(1),
        endpoint=None,
        recipient=to,
        leased_until=NOW + LEASE,
    )


async def test_a_leased_delivery_is_claimed_again_only_when_its_lease_ends(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    first = await one_claimed(seeded)

    assert (await seeded.deliveries.claim_due(NOW, LEASE, 10)).leased == []
    assert (await seeded.deliveries.claim_due(NOW + LEASE - MICROSECOND, LEASE, 10)).leased == []

    # The relay died without a word: at the end of its lease another takes it over.
    again = await one_claimed(seeded, NOW + LEASE)
    assert again.delivery == first.delivery
    assert again.leased_until == NOW + 2 * LEASE


async def test_nothing_is_claimed_before_it_is_due(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    claimed = await one_claimed(seeded)
    retry_at = NOW + timedelta(seconds=5)
    await seeded.deliveries.record_failure(claimed.delivery.delivery_id, NOW, "503", retry_at)

    assert (await seeded.deliveries.claim_due(retry_at - MICROSECOND, LEASE, 10)).leased == []
    assert (await one_claimed(seeded, retry_at)).delivery.attempts == 1


async def test_the_earliest_due_are_claimed_first_up_to_the_limit(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    events = await committed(seeded, 1, 2, 3, 4)
    await seeded.deliveries.fan_out(NOW, 100)
    # Due again in an order of their own: 4, 2, 1, 3.
    delays = {events[0]: 30, events[1]: 20, events[2]: 40, events[3]: 10}
    for claimed in (await seeded.deliveries.claim_due(NOW, LEASE, 10)).leased:
        when = NOW + timedelta(seconds=delays[claimed.event.event_id])
        await seeded.deliveries.record_failure(claimed.delivery.delivery_id, NOW, "500", when)
    later = NOW + timedelta(minutes=1)

    first = (await seeded.deliveries.claim_due(later, LEASE, 3)).leased
    rest = (await seeded.deliveries.claim_due(later, LEASE, 3)).leased

    assert [c.event.event_id for c in first] == [events[3], events[1], events[0]]
    assert [c.event.event_id for c in rest] == [events[2]]


async def test_a_delivery_whose_endpoint_was_removed_is_dropped_not_claimed(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    await seeded.destinations.remove_endpoint("whk_1")

    claim = await seeded.deliveries.claim_due(NOW, LEASE, 10)

    assert claim == Claim(leased=[], parked=0)
    assert await seeded.deliveries.list_deliveries() == []


@pytest.mark.parametrize(
    ("kind", "gone", "reason"),
    [
        (WEBHOOK, "disable", "endpoint disabled"),
        (EMAIL, "remove", "recipient removed"),
    ],
)
async def test_a_delivery_with_nowhere_to_go_is_parked_with_the_reason(
    seeded: Store, kind: DestinationKind, gone: str, reason: str
) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    await seeded.destinations.add_recipient(recipient())
    await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    if gone == "disable":
        await seeded.destinations.disable_endpoint("whk_1", NOW)
    else:
        await seeded.destinations.remove_recipient("rcp_1")

    claim = await seeded.deliveries.claim_due(NOW, LEASE, 10)

    [claimed] = claim.leased
    assert claim.parked == 1
    assert claimed.delivery.kind is not kind
    [dead] = await seeded.deliveries.list_deliveries(dead_only=True)
    assert (dead.kind, dead.last_error, dead.attempts, dead.dead_at) == (kind, reason, 0, NOW)


async def test_a_parked_delivery_does_not_take_the_place_of_a_sendable_one(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint("whk_a"))
    await seeded.destinations.add_endpoint(endpoint("whk_b"))
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    # Both are due at once; their ids decide the order. The first one's endpoint is
    # disabled (a removed one's deliveries go with it).
    ids = {delivery_id(event_id, WEBHOOK, e): e for e in ("whk_a", "whk_b")}
    first, second = (ids[i] for i in sorted(ids))
    await seeded.destinations.disable_endpoint(first, NOW)

    [claimed] = (await seeded.deliveries.claim_due(NOW, LEASE, 1)).leased

    assert claimed.endpoint is not None
    assert claimed.endpoint.endpoint_id == second
    [dead] = await seeded.deliveries.list_deliveries(dead_only=True)
    assert dead.destination_id == first


# Results


async def test_a_success_is_recorded_once_and_ends_the_lease(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    claimed = await one_claimed(seeded)
    done = NOW + timedelta(seconds=1)

    await seeded.deliveries.record_success(claimed.delivery.delivery_id, done)
    await seeded.deliveries.record_success(claimed.delivery.delivery_id, done + LEASE)

    assert await delivery(seeded, event_id, WEBHOOK, "whk_1") == evolve(
        claimed.delivery,
        state=DeliveryState.DELIVERED,
        attempts=1,
        next_attempt_at=None,
        delivered_at=done,
    )
    assert (await seeded.deliveries.claim_due(NOW + 10 * LEASE, LEASE, 10)).leased == []


async def test_a_failure_counts_the_attempt_and_makes_it_due_again(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    claimed = await one_claimed(seeded)
    retry_at = NOW + timedelta(seconds=5)

    await seeded.deliveries.record_failure(claimed.delivery.delivery_id, NOW, "HTTP 503", retry_at)

    failed = evolve(claimed.delivery, attempts=1, next_attempt_at=retry_at, last_error="HTTP 503")
    assert await delivery(seeded, event_id, WEBHOOK, "whk_1") == failed
    # The lease ended with the attempt: due again at the retry time, inside the old lease.
    assert retry_at < claimed.leased_until
    assert (await one_claimed(seeded, retry_at)).delivery == failed


async def test_a_failure_with_no_next_attempt_parks_the_delivery_as_dead(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    claimed = await one_claimed(seeded)

    await seeded.deliveries.record_failure(claimed.delivery.delivery_id, NOW, "HTTP 500", None)

    dead = evolve(
        claimed.delivery,
        state=DeliveryState.DEAD,
        attempts=1,
        next_attempt_at=None,
        last_error="HTTP 500",
        dead_at=NOW,
    )
    assert await delivery(seeded, event_id, WEBHOOK, "whk_1") == dead
    assert (await seeded.deliveries.claim_due(NOW + 10 * LEASE, LEASE, 10)).leased == []


async def test_an_error_is_kept_to_500_characters_and_without_nul(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    claimed = await one_claimed(seeded)

    error = "HTTP 400: \x00" + "é" * 1_000
    await seeded.deliveries.record_failure(claimed.delivery.delivery_id, NOW, error, None)

    kept = (await delivery(seeded, event_id, WEBHOOK, "whk_1")).last_error
    assert kept == ("HTTP 400: \ufffd" + "é" * 1_000)[:ERROR_LIMIT]
    assert ERROR_LIMIT == 500


async def test_a_late_failure_does_not_undo_a_success(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    claimed = await one_claimed(seeded)
    # A slow relay's lease ran out; another took the delivery over and delivered it.
    taken_over = await one_claimed(seeded, NOW + LEASE)
    await seeded.deliveries.record_success(taken_over.delivery.delivery_id, NOW + LEASE)

    await seeded.deliveries.record_failure(
        claimed.delivery.delivery_id, NOW + LEASE, "timeout", NOW + 2 * LEASE
    )

    kept = await delivery(seeded, event_id, WEBHOOK, "whk_1")
    assert (kept.state, kept.attempts, kept.last_error) == (DeliveryState.DELIVERED, 1, None)


async def test_results_for_an_unknown_delivery_change_nothing(seeded: Store) -> None:
    await seeded.deliveries.record_success("dlv_nope", NOW)
    await seeded.deliveries.record_failure("dlv_nope", NOW, "x", None)

    assert await deliveries(seeded) == {}


# Listing, retrying dead deliveries


async def test_deliveries_are_listed_newest_first_dead_ones_alone_on_request(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    for n in range(3):
        await committed(seeded, n)
        await seeded.deliveries.fan_out(NOW + timedelta(seconds=n), 100)
    [oldest, middle, newest] = [
        c.delivery for c in (await seeded.deliveries.claim_due(NOW + LEASE, LEASE, 10)).leased
    ]
    await seeded.deliveries.record_failure(oldest.delivery_id, NOW + LEASE, "gone", None)
    await seeded.deliveries.record_failure(newest.delivery_id, NOW + LEASE, "gone", None)

    everything = await seeded.deliveries.list_deliveries()
    dead = await seeded.deliveries.list_deliveries(dead_only=True)

    assert [d.delivery_id for d in everything] == [
        newest.delivery_id,
        middle.delivery_id,
        oldest.delivery_id,
    ]
    assert [d.delivery_id for d in dead] == [newest.delivery_id, oldest.delivery_id]
    assert [d.delivery_id for d in await seeded.deliveries.list_deliveries(limit=1)] == [
        newest.delivery_id
    ]
    assert [
        d.delivery_id for d in await seeded.deliveries.list_deliveries(dead_only=True, limit=1)
    ] == [newest.delivery_id]


async def test_retrying_an_event_makes_its_dead_deliveries_pending_and_due_now(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint("whk_a"))
    await seeded.destinations.add_endpoint(endpoint("whk_b"))
    [mine, other] = await committed(seeded, 1, 2)
    await seeded.deliveries.fan_out(NOW, 100)
    for each in (await seeded.deliveries.claim_due(NOW, LEASE, 10)).leased:
        await seeded.deliveries.record_failure(each.delivery.delivery_id, NOW, "HTTP 500", None)
    later = NOW + timedelta(days=2)

    assert await seeded.deliveries.retry_dead(mine, later) == 2

    claimed = (await seeded.deliveries.claim_due(later, LEASE, 10)).leased
    assert {c.event.event_id for c in claimed} == {mine}
    assert [c.delivery for c in claimed if c.delivery.destination_id == "whk_a"] == [
        evolve(
            pending(mine, WEBHOOK, "whk_a", NOW),
            next_attempt_at=later,
            last_error="HTTP 500",  # the last error stays for the record
        )
    ]
    assert len(await seeded.deliveries.list_deliveries(dead_only=True)) == 2  # the other's
    assert {d.event_id for d in await seeded.deliveries.list_deliveries(dead_only=True)} == {other}
    assert await seeded.deliveries.retry_dead(mine, later) == 0  # none dead any more


async def test_retrying_an_unknown_event_says_it_is_unknown(seeded: Store) -> None:
    [known] = await committed(seeded, 1)

    assert await seeded.deliveries.retry_dead("evt_nope", NOW) is None
    assert await seeded.deliveries.retry_dead(known, NOW) == 0


# The backlog


async def test_the_backlog_counts_unpublished_rows_and_pending_deliveries(
    seeded: Store,
) -> None:
    assert await seeded.deliveries.backlog(NOW) == (0, None)
    await seeded.destinations.add_endpoint(endpoint("whk_a"))
    await seeded.destinations.add_endpoint(endpoint("whk_b"))
    await committed(seeded, 1)
    await committed(seeded, 9, form_id=OTHER_FORM)  # a form without destinations
    await committed(seeded, 2)

    assert await seeded.deliveries.backlog(NOW) == (3, event_of(1).created_at)

    await seeded.deliveries.fan_out(NOW, 1)  # the oldest: two deliveries now
    assert await seeded.deliveries.backlog(NOW) == (4, event_of(2).created_at)

    await seeded.deliveries.fan_out(NOW, 100)
    assert await seeded.deliveries.backlog(NOW) == (4, NOW)

    for claimed in (await seeded.deliveries.claim_due(NOW, LEASE, 10)).leased:
        await seeded.deliveries.record_success(claimed.delivery.delivery_id, NOW)
    assert await seeded.deliveries.backlog(NOW) == (0, None)


# Waiting for events


async def listening(store: Store) -> None:
    """The first wait of a PostgreSQL store starts listening, and returns as soon as it
    does: what was committed before was announced to no one. The other stores have
    nothing to start."""
    if isinstance(store, PostgresStore):
        await store.new_events.wait(10)


async def test_a_wait_with_nothing_committed_lasts_its_timeout(seeded: Store) -> None:
    await listening(seeded)

    started = time.monotonic()
    await seeded.new_events.wait(0.2)

    assert time.monotonic() - started >= 0.19


async def test_a_commit_ends_a_wait(seeded: Store) -> None:
    await listening(seeded)
    started = time.monotonic()

    async def commit_soon() -> None:
        await asyncio.sleep(0.05)
        await committed(seeded, 1)

    await asyncio.gather(seeded.new_events.wait(30), commit_soon())

    assert time.monotonic() - started < 10


async def test_a_commit_between_two_waits_ends_the_next_at_once(seeded: Store) -> None:
    await listening(seeded)
    await committed(seeded, 1)

    started = time.monotonic()
    await seeded.new_events.wait(30)

    assert time.monotonic() - started < 10


# Purging keeps what is still to be delivered


async def test_a_purge_keeps_a_row_while_its_delivery_is_pending(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    week = timedelta(days=7)

    # Published long ago by now, but the delivery is not done: both stay.
    counts = await seeded.submissions.purge(NOW + 2 * week, week)
    assert counts == PurgeCounts(idempotency=0, outbox=0)
    assert list(await published_at(seeded)) == [event_id]

    claimed = await one_claimed(seeded, NOW + 2 * week)
    await seeded.deliveries.record_success(claimed.delivery.delivery_id, NOW + 2 * week)

    counts = await seeded.submissions.purge(NOW + 2 * week, week)
    assert counts == PurgeCounts(idempotency=0, outbox=1)
    assert await published_at(seeded) == {}
    assert await deliveries(seeded) == {}  # gone with its row


async def test_a_purge_keeps_a_dead_delivery_for_the_retention_after_it_died(
    seeded: Store,
) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    [event_id] = await committed(seeded, 1)
    await seeded.deliveries.fan_out(NOW, 100)
    week = timedelta(days=7)
    died = NOW + timedelta(days=3)
    claimed = await one_claimed(seeded, died)
    await seeded.deliveries.record_failure(claimed.delivery.delivery_id, died, "HTTP 500", None)

    # Published more than a week ago, dead for less: kept, retry still possible.
    assert await seeded.submissions.purge(died + week - MICROSECOND, week) == PurgeCounts(0, 0)
    assert list(await published_at(seeded)) == [event_id]

    # Dead a week exactly: gone, as a row published a week ago exactly is.
    assert await seeded.submissions.purge(died + week, week) == PurgeCounts(0, 1)
    assert await deliveries(seeded) == {}


# SQLite: the relay's queries read indexes


SQLITE_QUERIES: dict[str, tuple[str, tuple[object, ...] | dict[str, object]]] = {
    "fan_out": (lite_dialect.DELIVERIES.fan_out.unpublished, {"limit": 100}),
    "due_head": (
        claims._DUE_HEAD,
        {
            "now": "x",
            "limit": 100,
            "endpoint_removed": "r",
            "endpoint_disabled": "d",
            "recipient_removed": "rr",
            "chat_removed": "cr",
        },
    ),
    "claimable": (claims._CLAIMABLE, {"now": "x", "limit": 100, "active": 1}),
    "list_dead": (sql.LIST_DEAD, (100,)),
    "retry_dead": (sql.RETRY_DEAD, ("x", "evt_1")),
}


@pytest.mark.parametrize("name", list(SQLITE_QUERIES))
async def test_sqlite_relay_queries_read_an_index(tmp_path: Path, name: str) -> None:
    opened = await open_sqlite_store(f"sqlite:///{tmp_path / 'intake.db'}")
    await opened.close()
    text, params = SQLITE_QUERIES[name]

    with sqlite3.connect(tmp_path / "intake.db") as conn:
        details = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {text}", params)]

    # "SCAN t USING INDEX i" reads a (partial) index in its order, up to the LIMIT; a
    # bare "SCAN t" would read the table.
    assert not [d for d in details if d.startswith("SCAN") and "INDEX" not in d], details
    assert not [d for d in details if "TEMP B-TREE" in d], details  # no sort
