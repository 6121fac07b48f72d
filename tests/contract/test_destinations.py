"""A form's webhook endpoints and notification recipients, in every store."""

from __future__ import annotations

from datetime import timedelta

import pytest
from attrs import evolve

from intake.domain.chat import ChatApp, ChatDestination
from intake.ports.store import Store
from tests.contract.builders import (
    FORM_ID,
    T0,
    WORKSPACE_ID,
    endpoint,
    form,
    plan,
    recipient,
    seed,
    submission,
)

pytestmark = pytest.mark.anyio

OTHER_FORM = "frm_2"


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store, form(), form(OTHER_FORM, public_form_key="pk0form2"))
    return store


# Webhook endpoints


async def test_an_endpoint_comes_back_as_it_was_added(seeded: Store) -> None:
    added = endpoint(include_flagged=True)
    await seeded.destinations.add_endpoint(added)

    # Equality covers the secret, which repr leaves out.
    assert await seeded.destinations.get_endpoint("whk_1") == added


async def test_an_unknown_endpoint_is_none(seeded: Store) -> None:
    assert await seeded.destinations.get_endpoint("whk_nope") is None


async def test_a_forms_endpoints_are_listed_oldest_first_and_no_other_forms(
    seeded: Store,
) -> None:
    later = endpoint("whk_a", created_at=T0 + timedelta(minutes=2))
    earlier = endpoint("whk_b", created_at=T0 + timedelta(minutes=1))
    same_time = endpoint("whk_c", created_at=T0 + timedelta(minutes=2))
    undated = endpoint("whk_d", created_at=None)  # the domain allows it: listed first
    elsewhere = endpoint("whk_e", form_id=OTHER_FORM)
    for each in (later, earlier, same_time, undated, elsewhere):
        await seeded.destinations.add_endpoint(each)

    assert await seeded.destinations.list_endpoints(FORM_ID) == [
        undated,
        earlier,
        later,
        same_time,
    ]
    assert await seeded.destinations.list_endpoints(OTHER_FORM) == [elsewhere]
    assert await seeded.destinations.list_endpoints("frm_none") == []


async def test_removing_an_endpoint_says_whether_it_was_there(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())

    assert await seeded.destinations.remove_endpoint("whk_1") is True
    assert await seeded.destinations.remove_endpoint("whk_1") is False
    assert await seeded.destinations.get_endpoint("whk_1") is None
    assert await seeded.destinations.list_endpoints(FORM_ID) == []


async def test_removing_an_endpoint_drops_its_undelivered_deliveries(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    await seeded.submissions.commit(plan(submission(1)))
    await seeded.deliveries.fan_out(T0, 10)

    await seeded.destinations.remove_endpoint("whk_1")

    assert await seeded.deliveries.list_deliveries() == []


async def test_disabling_an_endpoint_keeps_the_first_time(seeded: Store) -> None:
    await seeded.destinations.add_endpoint(endpoint())
    when = T0 + timedelta(hours=1, microseconds=7)

    await seeded.destinations.disable_endpoint("whk_1", when)
    await seeded.destinations.disable_endpoint("whk_1", when + timedelta(hours=1))

    disabled = await seeded.destinations.get_endpoint("whk_1")
    assert disabled == evolve(endpoint(), disabled_at=when)
    assert disabled is not None
    assert not disabled.enabled


async def test_disabling_an_unknown_endpoint_does_nothing(seeded: Store) -> None:
    await seeded.destinations.disable_endpoint("whk_nope", T0)

    assert await seeded.destinations.get_endpoint("whk_nope") is None


# Lookups within a workspace: another workspace's destination is as missing as an
# unknown one, answered by the one lookup.

ELSEWHERE_FORM = "frm_elsewhere"


@pytest.fixture
async def two_workspaces(store: Store) -> Store:
    await seed(store, form(), form(ELSEWHERE_FORM, workspace_id="ws_2", public_form_key="pk0ws2"))
    return store


async def test_an_endpoint_is_found_in_its_workspace_only(two_workspaces: Store) -> None:
    destinations = two_workspaces.destinations
    mine, theirs = endpoint("whk_mine"), endpoint("whk_theirs", form_id=ELSEWHERE_FORM)
    for each in (mine, theirs):
        await destinations.add_endpoint(each)

    assert await destinations.get_endpoint("whk_mine", workspace_id=WORKSPACE_ID) == mine
    assert await destinations.get_endpoint("whk_theirs", workspace_id=WORKSPACE_ID) is None
    assert await destinations.get_endpoint("whk_nope", workspace_id=WORKSPACE_ID) is None
    assert await destinations.get_endpoint("whk_theirs", workspace_id="ws_2") == theirs
    assert await destinations.get_endpoint("whk_theirs") == theirs  # no workspace: any


async def test_a_recipient_is_found_in_its_workspace_only(two_workspaces: Store) -> None:
    destinations = two_workspaces.destinations
    mine, theirs = recipient("rcp_mine"), recipient("rcp_theirs", form_id=ELSEWHERE_FORM)
    for each in (mine, theirs):
        await destinations.add_recipient(each)

    assert await destinations.get_recipient("rcp_mine", workspace_id=WORKSPACE_ID) == mine
    assert await destinations.get_recipient("rcp_theirs", workspace_id=WORKSPACE_ID) is None
    assert await destinations.get_recipient("rcp_nope", workspace_id=WORKSPACE_ID) is None
    assert await destinations.get_recipient("rcp_theirs", workspace_id="ws_2") == theirs
    assert await destinations.get_recipient("rcp_theirs") == theirs


async def test_a_chat_destination_is_found_in_its_workspace_only(two_workspaces: Store) -> None:
    destinations = two_workspaces.destinations
    mine = ChatDestination("chat_mine", FORM_ID, ChatApp.SLACK, "https://hooks.slack.com/x")
    theirs = evolve(mine, destination_id="chat_theirs", form_id=ELSEWHERE_FORM)
    for each in (mine, theirs):
        await destinations.add_chat(each)

    assert await destinations.get_chat("chat_mine", workspace_id=WORKSPACE_ID) == mine
    assert await destinations.get_chat("chat_theirs", workspace_id=WORKSPACE_ID) is None
    assert await destinations.get_chat("chat_nope", workspace_id=WORKSPACE_ID) is None
    assert await destinations.get_chat("chat_theirs", workspace_id="ws_2") == theirs
    assert await destinations.get_chat("chat_theirs") == theirs


# Notification recipients


async def test_a_forms_recipients_are_listed_oldest_first_and_no_other_forms(
    seeded: Store,
) -> None:
    later = recipient("rcp_a", created_at=T0 + timedelta(minutes=2))
    earlier = recipient("rcp_b", created_at=T0 + timedelta(minutes=1))
    undated = recipient("rcp_c", created_at=None)
    elsewhere = recipient("rcp_d", form_id=OTHER_FORM)
    for each in (later, earlier, undated, elsewhere):
        await seeded.destinations.add_recipient(each)

    assert await seeded.destinations.list_recipients(FORM_ID) == [undated, earlier, later]
    assert await seeded.destinations.list_recipients(OTHER_FORM) == [elsewhere]


async def test_one_address_is_a_recipient_of_a_form_once(seeded: Store) -> None:
    first = recipient("rcp_1", email="ops@example.com")
    await seeded.destinations.add_recipient(first)

    with pytest.raises(ValueError, match="already a recipient"):
        await seeded.destinations.add_recipient(recipient("rcp_2", email="ops@example.com"))

    assert await seeded.destinations.list_recipients(FORM_ID) == [first]


async def test_one_address_may_be_a_recipient_of_two_forms(seeded: Store) -> None:
    mine = recipient("rcp_1", email="ops@example.com")
    theirs = recipient("rcp_2", email="ops@example.com", form_id=OTHER_FORM)

    await seeded.destinations.add_recipient(mine)
    await seeded.destinations.add_recipient(theirs)

    assert await seeded.destinations.list_recipients(FORM_ID) == [mine]
    assert await seeded.destinations.list_recipients(OTHER_FORM) == [theirs]


async def test_removing_a_recipient_says_whether_it_was_there(seeded: Store) -> None:
    await seeded.destinations.add_recipient(recipient())

    assert await seeded.destinations.remove_recipient("rcp_1") is True
    assert await seeded.destinations.remove_recipient("rcp_1") is False
    assert await seeded.destinations.list_recipients(FORM_ID) == []


async def test_a_removed_address_may_be_added_again(seeded: Store) -> None:
    await seeded.destinations.add_recipient(recipient("rcp_1", email="ops@example.com"))
    await seeded.destinations.remove_recipient("rcp_1")

    again = recipient("rcp_2", email="ops@example.com")
    await seeded.destinations.add_recipient(again)

    assert await seeded.destinations.list_recipients(FORM_ID) == [again]
