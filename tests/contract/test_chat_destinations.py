"""A form's chat destinations, in every store: kept as added (the secret sealed at rest
and opened as read), fanned out to for the events each wants, claimed with what the
relay needs to post, and removed with what they had not received."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest

from intake.adapters.sqlite import open_sqlite_store
from intake.domain.chat import ChatApp, ChatDestination
from intake.domain.deliveries import DestinationKind
from intake.domain.model import SubmissionStatus
from intake.domain.sealing import is_sealed
from intake.ports.store import Store
from tests.contract.builders import FORM_ID, T0, event_for, form, plan, seed, submission

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
LEASE = timedelta(minutes=2)
OTHER_FORM = "frm_2"


def chat(
    destination_id: str = "chat_1",
    *,
    app: ChatApp = ChatApp.SLACK,
    form_id: str = FORM_ID,
    include_flagged: bool = False,
    minutes: int = 0,
) -> ChatDestination:
    telegram = app is ChatApp.TELEGRAM
    return ChatDestination(
        destination_id=destination_id,
        form_id=form_id,
        app=app,
        secret="123:tok" if telegram else f"https://hooks.slack.com/services/{destination_id}",
        chat_id="-100" if telegram else None,
        include_flagged=include_flagged,
        created_at=T0 + timedelta(minutes=minutes),
    )


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form(), form(OTHER_FORM, public_form_key="pk0form2"))
    return store


async def test_destinations_come_back_as_added_oldest_first_per_form(seeded: Store) -> None:
    later = chat("chat_a", minutes=2)
    earlier = chat("chat_b", app=ChatApp.TELEGRAM, include_flagged=True, minutes=1)
    elsewhere = chat("chat_c", form_id=OTHER_FORM)
    for each in (later, earlier, elsewhere):
        await seeded.destinations.add_chat(each)

    # Equality covers the secret, which repr leaves out: sealed at rest, opened as read.
    assert await seeded.destinations.get_chat("chat_b") == earlier
    assert await seeded.destinations.get_chat("chat_nope") is None
    assert await seeded.destinations.list_chats(FORM_ID) == [earlier, later]


async def test_a_created_event_goes_to_every_chat_and_a_flagged_one_to_those_that_ask(
    seeded: Store,
) -> None:
    await seeded.destinations.add_chat(chat("chat_1"))
    await seeded.destinations.add_chat(chat("chat_2", app=ChatApp.TELEGRAM, include_flagged=True))
    accepted = submission(1)
    flagged = submission(2, status=SubmissionStatus.SPAM)
    for each in (accepted, flagged):
        await seeded.submissions.commit(plan(each))

    await seeded.deliveries.fan_out(NOW, 100)
    claim = await seeded.deliveries.claim_due(NOW, LEASE, 10)

    got = sorted((c.event.event_id, c.delivery.destination_id) for c in claim.leased)
    assert got == sorted(
        [
            (event_for(accepted).event_id, "chat_1"),
            (event_for(accepted).event_id, "chat_2"),
            (event_for(flagged).event_id, "chat_2"),
        ]
    )
    for item in claim.leased:
        assert item.delivery.kind is DestinationKind.CHAT
        assert item.endpoint is None
        assert item.recipient is None
        assert item.chat == await seeded.destinations.get_chat(item.delivery.destination_id)


async def test_removing_a_destination_drops_what_it_had_not_received(seeded: Store) -> None:
    await seeded.destinations.add_chat(chat("chat_1"))
    await seeded.destinations.add_chat(chat("chat_2"))
    for n in (1, 2):
        await seeded.submissions.commit(plan(submission(n)))
    await seeded.deliveries.fan_out(NOW, 100)
    claim = await seeded.deliveries.claim_due(NOW, LEASE, 10)
    mine = sorted(
        c.delivery.delivery_id for c in claim.leased if c.chat and c.chat.destination_id == "chat_1"
    )
    await seeded.deliveries.record_success(mine[0], NOW, 200)

    assert await seeded.destinations.remove_chat("chat_1") is True
    assert await seeded.destinations.remove_chat("chat_1") is False

    left = await seeded.deliveries.list_deliveries(limit=100)
    assert {d.delivery_id for d in left if d.destination_id == "chat_1"} == {mine[0]}
    assert len([d for d in left if d.destination_id == "chat_2"]) == 2
    assert await seeded.destinations.get_chat("chat_1") is None


async def test_the_secret_is_sealed_at_rest_in_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "intake.db"
    store = await open_sqlite_store(f"sqlite:///{path}")
    try:
        await seed(store, form())
        await store.destinations.add_chat(chat("chat_1", app=ChatApp.TELEGRAM))
        opened = await store.destinations.get_chat("chat_1")
    finally:
        await store.close()

    with closing(sqlite3.connect(path)) as conn:
        (stored,) = conn.execute("SELECT secret FROM chat_destinations").fetchone()
    assert opened is not None
    assert opened.secret == "123:tok"
    assert is_sealed(stored)
    assert "123:tok" not in stored
