"""A recipient's consent in every store: a pending recipient is kept with its link's hash
(never read back), found by it while pending, answered once (confirmed or declined);
the fan-out mails confirmed recipients only, and the claim gives the relay the status."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from intake.domain.deliveries import DestinationKind, NotificationRecipient, RecipientStatus
from intake.domain.destination_limits import SendThrottled
from intake.domain.recipient_consent import consent_event
from intake.ports.store import Store
from tests.contract.builders import (
    FORM_ID,
    T0,
    WORKSPACE_ID,
    form,
    plan,
    recipient,
    seed,
    submission,
)

pytestmark = pytest.mark.anyio

NOW = T0 + timedelta(hours=1)
LEASE = timedelta(minutes=2)
HASH = "ab" * 32


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form())
    return store


def pending(recipient_id: str = "rcp_p", confirm_hash: str = HASH) -> NotificationRecipient:
    return NotificationRecipient(
        recipient_id=recipient_id,
        form_id=FORM_ID,
        email=f"{recipient_id}@example.com",
        created_at=T0,
        status=RecipientStatus.PENDING,
        confirm_hash=confirm_hash,
    )


async def test_a_pending_recipient_is_kept_and_found_by_its_link_only_while_pending(
    seeded: Store,
) -> None:
    added = pending()
    await seeded.destinations.add_recipient(added)

    [listed] = await seeded.destinations.list_recipients(FORM_ID)
    found = await seeded.destinations.pending_recipient(HASH)

    assert listed.status is RecipientStatus.PENDING
    assert listed.confirm_hash is None  # written, never read back
    assert found == listed
    assert await seeded.destinations.pending_recipient("cd" * 32) is None


@pytest.mark.parametrize("answer", [RecipientStatus.CONFIRMED, RecipientStatus.DECLINED])
async def test_a_link_answers_once(seeded: Store, answer: RecipientStatus) -> None:
    await seeded.destinations.add_recipient(pending())

    first = await seeded.destinations.answer_recipient(HASH, answer)
    again = await seeded.destinations.answer_recipient(HASH, RecipientStatus.CONFIRMED)

    assert first is not None
    assert first.status is answer
    assert again is None
    assert await seeded.destinations.pending_recipient(HASH) is None
    [listed] = await seeded.destinations.list_recipients(FORM_ID)
    assert listed.status is answer


async def test_the_fan_out_mails_confirmed_recipients_only(seeded: Store) -> None:
    await seeded.destinations.add_recipient(recipient("rcp_ok", created_at=T0))
    await seeded.destinations.add_recipient(pending("rcp_wait", "11" * 32))
    await seeded.destinations.add_recipient(pending("rcp_no", "22" * 32))
    await seeded.destinations.answer_recipient("22" * 32, RecipientStatus.DECLINED)
    await seeded.submissions.commit(plan(submission(1, created_at=T0 + timedelta(minutes=1))))

    await seeded.deliveries.fan_out(NOW, 100)
    claim = await seeded.deliveries.claim_due(NOW, LEASE, 10)

    mailed = [c for c in claim.leased if c.delivery.kind is DestinationKind.EMAIL]
    assert [c.delivery.destination_id for c in mailed] == ["rcp_ok"]
    assert [c.recipient.status for c in mailed if c.recipient] == [RecipientStatus.CONFIRMED]


async def test_a_workspace_asks_ten_addresses_an_hour_then_waits(seeded: Store) -> None:
    """Removing an address that never answered and adding it again asks again: the
    workspace's consent mails are counted, so that cannot mail anyone over and over."""

    async def ask(n: int, at: datetime) -> None:
        asked = pending(f"rcp_{n}", f"{n:064x}")
        await seeded.destinations.add_recipient(asked)
        event = consent_event(f"evt_c{n}", asked, WORKSPACE_ID, token=f"t{n}", added_by="", now=at)
        await seeded.deliveries.queue_direct(
            event, DestinationKind.EMAIL, asked.recipient_id, at, throttled=True
        )

    for n in range(10):
        await ask(n, NOW + timedelta(minutes=n))

    with pytest.raises(SendThrottled) as refused:
        await ask(10, NOW + timedelta(minutes=30))

    assert refused.value.retry_after == 30 * 60
    await ask(11, NOW + timedelta(hours=1, seconds=1))
