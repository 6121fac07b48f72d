"""A form's destinations under a bound, in every store: one past it adds nothing, other
forms do not count, and adds at the same moment never pass it together."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from intake.domain.destination_limits import LimitReached
from intake.ports.store import Store
from tests.contract.builders import FORM_ID, endpoint, form, recipient, seed
from tests.contract.test_chat_destinations import chat

pytestmark = pytest.mark.anyio

OTHER_FORM = "frm_2"
BOUND = 3

# Each kind: add one (an id of its own, on a form) under the bound, and count a form's.
Add = Callable[[Store, str, str], Awaitable[None]]
Count = Callable[[Store, str], Awaitable[int]]


async def _add_endpoint(store: Store, item_id: str, form_id: str) -> None:
    await store.destinations.add_endpoint(endpoint(item_id, form_id=form_id), at_most=BOUND)


async def _add_recipient(store: Store, item_id: str, form_id: str) -> None:
    await store.destinations.add_recipient(recipient(item_id, form_id=form_id), at_most=BOUND)


async def _add_chat(store: Store, item_id: str, form_id: str) -> None:
    await store.destinations.add_chat(chat(item_id, form_id=form_id), at_most=BOUND)


async def _endpoints(store: Store, form_id: str) -> int:
    return len(await store.destinations.list_endpoints(form_id))


async def _recipients(store: Store, form_id: str) -> int:
    return len(await store.destinations.list_recipients(form_id))


async def _chats(store: Store, form_id: str) -> int:
    return len(await store.destinations.list_chats(form_id))


KINDS = pytest.mark.parametrize(
    ("add", "count"),
    [(_add_endpoint, _endpoints), (_add_recipient, _recipients), (_add_chat, _chats)],
    ids=["webhooks", "recipients", "chats"],
)


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form(), form(OTHER_FORM, public_form_key="pk0form2"))
    return store


@KINDS
async def test_one_past_the_bound_adds_nothing(seeded: Store, add: Add, count: Count) -> None:
    for n in range(BOUND):
        await add(seeded, f"dst_{n}", FORM_ID)

    with pytest.raises(LimitReached):
        await add(seeded, "dst_over", FORM_ID)

    assert await count(seeded, FORM_ID) == BOUND


@KINDS
async def test_another_forms_destinations_do_not_count(
    seeded: Store, add: Add, count: Count
) -> None:
    for n in range(BOUND):
        await add(seeded, f"dst_{n}", OTHER_FORM)

    await add(seeded, "dst_mine", FORM_ID)

    assert await count(seeded, FORM_ID) == 1


@KINDS
async def test_adds_at_the_same_moment_stop_at_the_bound(
    seeded: Store, add: Add, count: Count
) -> None:
    outcomes = await asyncio.gather(
        *(add(seeded, f"dst_{n}", FORM_ID) for n in range(BOUND * 3)), return_exceptions=True
    )

    refused = [each for each in outcomes if isinstance(each, LimitReached)]
    assert len(refused) == BOUND * 2
    assert [each for each in outcomes if each is not None and each not in refused] == []
    assert await count(seeded, FORM_ID) == BOUND


async def test_a_removed_destination_makes_room(seeded: Store) -> None:
    for n in range(BOUND):
        await _add_recipient(seeded, f"rcp_{n}", FORM_ID)
    await seeded.destinations.remove_recipient("rcp_0")

    await _add_recipient(seeded, "rcp_again", FORM_ID)

    assert await _recipients(seeded, FORM_ID) == BOUND
