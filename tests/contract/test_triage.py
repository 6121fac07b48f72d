"""An owner's triage, in every store: a release charges the month once and queues one new
`submission.created`; marking spam queues nothing and gives nothing back; an erasure
leaves no submitted value in any table, and queues `submission.deleted` for the webhook
endpoints only."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import timedelta

import psycopg
import pytest
from attrs import evolve
from psycopg import sql

from intake.domain.deliveries import DestinationKind
from intake.domain.model import EventType, OutboxEvent, Submission, SubmissionStatus
from intake.domain.triage import deletion_event, release_event
from intake.ports.store import Store
from intake.ports.triage import Erasure, Release
from tests.contract.builders import (
    FORM_ID,
    PERIOD,
    T0,
    WORKSPACE_ID,
    endpoint,
    plan,
    quota,
    recipient,
    record,
    seed,
    submission,
)
from tests.contract.conftest import Backend, PostgresBackend, SqliteBackend

pytestmark = pytest.mark.anyio

SPAM = SubmissionStatus.SPAM
ACCEPTED = SubmissionStatus.ACCEPTED
RELEASED_AT = T0 + timedelta(days=40)  # the month after the submission's
RELEASE_PERIOD = "2026-02"
# What the visitor typed, in every place a value is kept: none may outlive an erasure.
SECRET = "zq-erase-me-7731"


# As the pipeline scopes keys: a public route's by form and client network.
PUBLIC_SCOPE = f"public:{FORM_ID}:203.0.113.0/24"
SERVER_SCOPE = f"server:{FORM_ID}"


async def committed(
    store: Store, sub: Submission, *, charged: bool = False, scope: str = PUBLIC_SCOPE
) -> None:
    result = await store.submissions.commit(
        plan(
            sub,
            idempotency=record(sub, key=f"key-{sub.submission_id}", scope=scope),
            charge=quota(100) if charged else None,
        )
    )
    assert type(result).__name__ == "Committed"


def release_of(sub: Submission, n: int = 1) -> Release:
    event = release_event(f"evt_release{n}", sub, None, RELEASED_AT)
    return Release(sub.submission_id, event, RELEASE_PERIOD)


def erasure_of(sub: Submission, event_id: str = "evt_deleted") -> Erasure:
    return Erasure(sub.submission_id, deletion_event(event_id, sub, RELEASED_AT))


async def held_key(store: Store, sub: Submission, scope: str) -> str | None:
    found = await store.submissions.find_idempotency(
        scope, f"key-{sub.submission_id}", T0 - timedelta(days=1)
    )
    return None if found is None else found.submission_id


async def events_of(store: Store, sub: Submission) -> list[OutboxEvent]:
    return [
        row.event
        for row in await store.submissions.outbox(1000)
        if row.event.submission_id == sub.submission_id
    ]


async def test_a_release_accepts_charges_the_month_once_and_queues_one_created_event(
    store: Store,
) -> None:
    await seed(store)
    sub = submission(1, status=SPAM)
    await committed(store, sub)

    first = await store.submissions.release(release_of(sub, 1))
    again = await store.submissions.release(release_of(sub, 2))

    assert first is not None
    assert first.changed
    assert first.submission.status is ACCEPTED
    assert again is not None
    assert not again.changed
    assert again.submission == first.submission
    assert (await store.submissions.get(sub.submission_id)) == first.submission
    assert await store.workspaces.usage(WORKSPACE_ID, RELEASE_PERIOD) == 1
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0
    usage = {u.form_id: u.used for u in await store.workspaces.form_usage(WORKSPACE_ID, "2026-02")}
    assert usage[sub.form_id] == 1
    events = await events_of(store, sub)
    assert [e.event_type for e in events] == [EventType.FLAGGED, EventType.CREATED]
    created = events[1]
    assert created.event_id == "evt_release1"
    assert created.created_at == RELEASED_AT
    assert created.payload["type"] == "submission.created"
    assert created.payload["status"] == "accepted"
    assert created.payload["data"] == sub.data
    assert created.payload["subject"] == sub.subject
    assert created.payload["created_at"] == sub.created_at.isoformat()


async def test_a_release_is_never_refused_for_quota(store: Store) -> None:
    await seed(store)
    full = submission(1)
    await store.submissions.commit(plan(full, charge=quota(1, period=RELEASE_PERIOD)))
    spam = submission(2, status=SPAM)
    await committed(store, spam)

    released = await store.submissions.release(release_of(spam))

    assert released is not None
    assert released.changed
    assert await store.workspaces.usage(WORKSPACE_ID, RELEASE_PERIOD) == 2


async def test_releasing_an_accepted_submission_changes_nothing(store: Store) -> None:
    await seed(store)
    sub = submission(1)
    await committed(store, sub, charged=True)

    released = await store.submissions.release(release_of(sub))

    assert released is not None
    assert not released.changed
    assert released.submission == sub
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 1
    assert await store.workspaces.usage(WORKSPACE_ID, RELEASE_PERIOD) == 0
    assert len(await events_of(store, sub)) == 1


async def test_marking_spam_queues_nothing_and_keeps_the_months_usage(store: Store) -> None:
    await seed(store)
    sub = submission(1)
    await committed(store, sub, charged=True)

    marked = await store.submissions.mark_spam(sub.submission_id)

    assert marked is not None
    assert marked.status is SPAM
    assert (await store.submissions.get(sub.submission_id)) == marked
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 1
    assert len(await events_of(store, sub)) == 1


@pytest.mark.parametrize("arrived", [ACCEPTED, SPAM])
async def test_a_submission_accepted_once_is_never_charged_or_queued_twice(
    store: Store, arrived: SubmissionStatus
) -> None:
    # Accepted on arrival (or released), then marked as spam by mistake, then released:
    # its destinations had its submission.created already.
    await seed(store)
    sub = submission(1, status=arrived)
    await committed(store, sub, charged=arrived is ACCEPTED)
    if arrived is SPAM:
        first = await store.submissions.release(release_of(sub, 1))
        assert first is not None
        assert first.queued
    before = await events_of(store, sub)

    await store.submissions.mark_spam(sub.submission_id)
    again = await store.submissions.release(release_of(sub, 2))

    assert again is not None
    assert again.changed
    assert not again.queued
    assert again.submission.status is ACCEPTED
    assert (await store.submissions.get(sub.submission_id)) == again.submission
    assert await events_of(store, sub) == before
    assert [e.event_type for e in before].count(EventType.CREATED) == 1
    period = PERIOD if arrived is ACCEPTED else RELEASE_PERIOD
    assert await store.workspaces.usage(WORKSPACE_ID, period) == 1
    usage = {u.form_id: u.used for u in await store.workspaces.form_usage(WORKSPACE_ID, period)}
    assert usage[sub.form_id] == 1


async def test_an_unknown_submission_is_none_and_nothing_is_written(store: Store) -> None:
    await seed(store)
    ghost = submission(9, status=SPAM)

    assert await store.submissions.release(release_of(ghost)) is None
    assert await store.submissions.mark_spam(ghost.submission_id) is None
    assert await store.submissions.erase(erasure_of(ghost)) is None
    assert await store.submissions.outbox(10) == []
    assert await store.workspaces.usage(WORKSPACE_ID, RELEASE_PERIOD) == 0


async def dump(store: Store, backend: Backend) -> str:
    """Every value of every table, as text: where an erased value would show."""
    if isinstance(backend, SqliteBackend):
        with closing(sqlite3.connect(backend.path)) as conn:
            names = [
                row[0]
                for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            return repr([list(conn.execute(f'SELECT * FROM "{name}"')) for name in names])
    assert isinstance(backend, PostgresBackend)
    async with await psycopg.AsyncConnection.connect(backend.url, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        )
        rows = []
        for (name,) in await cursor.fetchall():
            table = await conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(name)))
            rows.append(await table.fetchall())
        return repr(rows)


async def test_an_erasure_leaves_no_submitted_value_in_any_table(
    store: Store, backend: Backend
) -> None:
    await seed(store)
    await store.destinations.add_endpoint(endpoint("whk_1", include_flagged=True))
    await store.destinations.add_recipient(recipient("rcp_1"))
    base = submission(1, status=SPAM, files=2)
    sub = Submission(
        submission_id=base.submission_id,
        form_id=base.form_id,
        workspace_id=base.workspace_id,
        status=SPAM,
        data={"message": f"hello {SECRET}", "email": f"{SECRET}@example.com"},
        created_at=base.created_at,
        subject=f"About {SECRET}",
        reply_to=f"{SECRET}@example.com",
        spam_score=7.5,
        client_ip="198.51.100.77",
        files=tuple(evolve(f, name=f"{SECRET}-{i}.pdf") for i, f in enumerate(base.files)),
        spam_reasons=(f"token:{SECRET}",),
    )
    await committed(store, sub)
    assert await store.deliveries.fan_out(RELEASED_AT, 100) == 1  # flagged: to the endpoint
    released = await store.submissions.release(release_of(sub))
    assert released is not None
    assert await store.deliveries.fan_out(RELEASED_AT, 100) == 1  # created: both
    stored_bytes = await store.workspaces.storage_used(WORKSPACE_ID)
    assert stored_bytes == sum(f.size for f in sub.files)
    before = await dump(store, backend)
    assert SECRET in before
    assert "198.51.100.77" in before

    erased = await store.submissions.erase(erasure_of(sub))

    assert erased is not None
    assert erased.file_keys == tuple(f.key for f in sub.files)
    after = await dump(store, backend)
    assert SECRET not in after
    assert "198.51.100.77" not in after
    assert await store.submissions.get(sub.submission_id) is None
    assert await store.submissions.existing([sub.submission_id]) == set()
    assert await store.workspaces.storage_used(WORKSPACE_ID) == 0
    assert await held_key(store, sub, PUBLIC_SCOPE) is None
    # The undelivered deliveries are gone; the rows stay, blank; the deletion is queued.
    assert await store.deliveries.list_deliveries(limit=100) == []
    events = {e.event_type: e for e in await events_of(store, sub)}
    assert sorted(events) == sorted([EventType.FLAGGED, EventType.CREATED, EventType.DELETED])
    for event in (events[EventType.FLAGGED], events[EventType.CREATED]):
        assert event.payload["data"] == {}
        assert event.payload["subject"] is None
        assert event.payload["reply_to"] is None
        assert event.payload["files"] == []
        assert event.payload["submission_id"] == sub.submission_id
    assert events[EventType.DELETED].payload == {
        "type": "submission.deleted",
        "submission_id": sub.submission_id,
        "form_id": sub.form_id,
        "workspace_id": WORKSPACE_ID,
        "deleted_at": RELEASED_AT.isoformat(),
    }
    # The month's count stays: an erasure gives no usage back.
    assert await store.workspaces.usage(WORKSPACE_ID, RELEASE_PERIOD) == 1


async def test_the_deletion_goes_to_every_webhook_endpoint_and_no_mail(store: Store) -> None:
    await seed(store)
    await store.destinations.add_endpoint(endpoint("whk_1"))
    await store.destinations.add_endpoint(endpoint("whk_2", include_flagged=True))
    await store.destinations.add_recipient(recipient("rcp_1"))
    sub = submission(1)
    await committed(store, sub, charged=True)
    await store.deliveries.fan_out(RELEASED_AT, 100)
    for delivery in await store.deliveries.list_deliveries(limit=100):
        await store.deliveries.record_success(delivery.delivery_id, RELEASED_AT)

    await store.submissions.erase(erasure_of(sub))
    assert await store.deliveries.fan_out(RELEASED_AT, 100) == 1

    pending = [
        (d.kind, d.destination_id)
        for d in await store.deliveries.list_deliveries(limit=100)
        if d.event_id == "evt_deleted"
    ]
    assert sorted(pending) == [
        (DestinationKind.WEBHOOK, "whk_1"),
        (DestinationKind.WEBHOOK, "whk_2"),
    ]
    # What was delivered stays on record: it holds no submitted value.
    delivered = [
        d for d in await store.deliveries.list_deliveries(limit=100) if d.event_id != "evt_deleted"
    ]
    assert len(delivered) == 3


async def test_an_erasure_drops_its_own_idempotency_record_on_either_route_and_no_other(
    store: Store,
) -> None:
    await seed(store)
    public, server, kept_public, kept_server = (submission(n) for n in range(1, 5))
    await committed(store, public, scope=PUBLIC_SCOPE)
    await committed(store, server, scope=SERVER_SCOPE)
    await committed(store, kept_public, scope=PUBLIC_SCOPE)
    await committed(store, kept_server, scope=SERVER_SCOPE)

    assert await store.submissions.erase(erasure_of(public)) is not None
    assert await store.submissions.erase(erasure_of(server, "evt_deleted2")) is not None

    assert await held_key(store, public, PUBLIC_SCOPE) is None
    assert await held_key(store, server, SERVER_SCOPE) is None
    assert await held_key(store, kept_public, PUBLIC_SCOPE) == kept_public.submission_id
    assert await held_key(store, kept_server, SERVER_SCOPE) == kept_server.submission_id
