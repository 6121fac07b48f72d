"""Store.users' invitations: kept one per workspace and address, listed while pending,
closed once, and accepted only by the user of the invited address (or by a new user
for an address with none), the membership made in the same transaction; on every store."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from intake.domain import ids
from intake.domain.users import Invitation, InvitationStatus, Role
from intake.ports.store import Store
from tests.contract.builders import T0
from tests.contract.test_users import membership, user, users_store

pytestmark = pytest.mark.anyio
__all__ = ["users_store"]  # the fixture, shared with test_users.py

LATER = T0 + timedelta(hours=1)


def invitation(  # noqa: PLR0917 - a builder: every field has its default
    invitation_id: str = "inv_1",
    email: str = "new@example.com",
    workspace_id: str = "ws_1",
    role: Role = Role.MEMBER,
    secret: str = "invite-1",
    minutes: int = 0,
) -> Invitation:
    return Invitation(
        invitation_id=invitation_id,
        workspace_id=workspace_id,
        email=email,
        role=role,
        invited_by="usr_1",
        token_hash=ids.hash_secret(secret),
        created_at=T0 + timedelta(minutes=minutes),
        expires_at=T0 + timedelta(days=7, minutes=minutes),
    )


@pytest.fixture
async def inviting(users_store: Store) -> Store:
    """ws_1 with its owner usr_1 (ada@), who invites."""
    await users_store.users.add(user(), membership())
    return users_store


async def test_an_invitation_is_kept_found_and_listed(inviting: Store) -> None:
    stored = await inviting.users.put_invitation(invitation())
    await inviting.users.put_invitation(
        invitation("inv_2", "b@example.com", secret="s2", minutes=1)
    )
    await inviting.users.put_invitation(invitation("inv_3", workspace_id="ws_2", secret="s3"))

    assert stored == invitation()
    assert await inviting.users.get_invitation("inv_1") == invitation()
    assert await inviting.users.find_invitation(ids.hash_secret("invite-1")) == invitation()
    assert await inviting.users.find_invitation(ids.hash_secret("unknown")) is None
    listed = await inviting.users.workspace_invitations("ws_1")
    assert [i.invitation_id for i in listed] == ["inv_1", "inv_2"]
    mine = await inviting.users.invitations_for("new@example.com")
    assert [i.invitation_id for i in mine] == ["inv_1", "inv_3"]


async def test_inviting_an_address_again_makes_the_one_invitation_anew(inviting: Store) -> None:
    await inviting.users.put_invitation(invitation())
    await inviting.users.close_invitation("inv_1", InvitationStatus.DECLINED)

    again = await inviting.users.put_invitation(
        invitation("inv_9", role=Role.OWNER, secret="invite-2", minutes=5)
    )

    assert again.invitation_id == "inv_1"
    assert again.role is Role.OWNER
    assert again.status is InvitationStatus.PENDING
    assert again.expires_at == T0 + timedelta(days=7, minutes=5)
    assert await inviting.users.find_invitation(ids.hash_secret("invite-1")) is None
    assert await inviting.users.find_invitation(ids.hash_secret("invite-2")) == again
    assert await inviting.users.get_invitation("inv_9") is None


async def test_an_invitation_is_closed_once_and_then_not_listed(inviting: Store) -> None:
    await inviting.users.put_invitation(invitation())

    assert await inviting.users.close_invitation("inv_1", InvitationStatus.REVOKED) is True
    assert await inviting.users.close_invitation("inv_1", InvitationStatus.DECLINED) is False

    closed = await inviting.users.get_invitation("inv_1")
    assert closed is not None
    assert closed.status is InvitationStatus.REVOKED
    assert await inviting.users.workspace_invitations("ws_1") == []
    assert await inviting.users.invitations_for("new@example.com") == []
    assert await inviting.users.accept_invitation("inv_1", "usr_1", LATER) is None


async def test_only_the_invited_user_accepts_and_becomes_a_member(inviting: Store) -> None:
    await inviting.users.add(user("usr_2", "new@example.com"), membership("usr_2", "ws_2"))
    await inviting.users.add(user("usr_3", "other@example.com"), membership("usr_3", "ws_2"))
    await inviting.users.put_invitation(invitation())

    assert await inviting.users.accept_invitation("inv_1", "usr_3", LATER) is None
    assert await inviting.users.accept_invitation("inv_1", "usr_9", LATER) is None
    assert [m.workspace_id for m in await inviting.users.memberships("usr_3")] == ["ws_2"]
    accepted = await inviting.users.accept_invitation("inv_1", "usr_2", LATER)

    assert accepted is not None
    assert accepted.status is InvitationStatus.ACCEPTED
    roles = {m.workspace_id: m.role for m in await inviting.users.memberships("usr_2")}
    assert roles == {"ws_1": Role.MEMBER, "ws_2": Role.OWNER}
    assert await inviting.users.accept_invitation("inv_1", "usr_2", LATER) is None


async def test_an_expired_invitation_is_not_accepted(inviting: Store) -> None:
    await inviting.users.add(user("usr_2", "new@example.com"), membership("usr_2", "ws_2"))
    await inviting.users.put_invitation(invitation())

    late = T0 + timedelta(days=7)

    assert await inviting.users.accept_invitation("inv_1", "usr_2", late) is None
    assert await inviting.users.join("inv_1", user("usr_5", "new@example.com"), late) is None
    assert [m.workspace_id for m in await inviting.users.memberships("usr_2")] == ["ws_2"]


async def test_a_member_accepting_keeps_their_role(inviting: Store) -> None:
    await inviting.users.put_invitation(invitation(email="ada@example.com"))

    accepted = await inviting.users.accept_invitation("inv_1", "usr_1", LATER)

    assert accepted is not None
    assert [m.role for m in await inviting.users.memberships("usr_1")] == [Role.OWNER]


async def test_a_new_user_joins_by_an_invitation(inviting: Store) -> None:
    await inviting.users.put_invitation(invitation(role=Role.OWNER))
    newcomer = user("usr_5", "new@example.com", minutes=60)

    assert await inviting.users.join("inv_1", user("usr_6", "x@example.com"), LATER) is None
    joined = await inviting.users.join("inv_1", newcomer, LATER)

    assert joined is not None
    assert joined.status is InvitationStatus.ACCEPTED
    assert await inviting.users.get("usr_5") == newcomer
    assert [m.role for m in await inviting.users.memberships("usr_5")] == [Role.OWNER]
    assert await inviting.users.get("usr_6") is None


async def test_joining_for_an_address_with_a_user_changes_nothing(inviting: Store) -> None:
    await inviting.users.add(user("usr_2", "new@example.com"), membership("usr_2", "ws_2"))
    await inviting.users.put_invitation(invitation())

    joined = await inviting.users.join("inv_1", user("usr_5", "new@example.com"), LATER)

    assert joined is None
    assert await inviting.users.get("usr_5") is None
    still = await inviting.users.get_invitation("inv_1")
    assert still is not None
    assert still.status is InvitationStatus.PENDING
    assert [m.workspace_id for m in await inviting.users.memberships("usr_2")] == ["ws_2"]


async def test_of_two_accepts_at_once_one_wins(inviting: Store) -> None:
    await inviting.users.put_invitation(invitation())
    newcomers = [user(f"usr_{n}", "new@example.com") for n in range(5, 10)]

    results = await asyncio.gather(*(inviting.users.join("inv_1", u, LATER) for u in newcomers))

    assert sum(r is not None for r in results) == 1
    assert len(await inviting.users.workspace_memberships("ws_1")) == 2


async def test_removing_the_inviter_withdraws_their_invitations(inviting: Store) -> None:
    await inviting.users.add(user("usr_2", "bo@example.com"), membership("usr_2"))
    await inviting.users.put_invitation(invitation())

    assert await inviting.users.remove("usr_1") is True

    assert await inviting.users.get_invitation("inv_1") is None
    assert await inviting.users.invitations_for("new@example.com") == []


async def test_invitations_long_expired_are_purged_whatever_their_status(
    inviting: Store,
) -> None:
    await inviting.users.put_invitation(invitation())
    await inviting.users.put_invitation(invitation("inv_2", "b@example.com", secret="s2"))
    await inviting.users.put_invitation(
        invitation("inv_3", "c@example.com", secret="s3", minutes=9)
    )
    await inviting.users.close_invitation("inv_2", InvitationStatus.DECLINED)
    cutoff = T0 + timedelta(days=7, minutes=5)  # after the first two expired

    purged = await inviting.users.purge_invitations(cutoff)

    assert purged == 2
    assert await inviting.users.get_invitation("inv_1") is None
    assert await inviting.users.get_invitation("inv_2") is None
    assert await inviting.users.get_invitation("inv_3") is not None
    assert await inviting.users.purge_invitations(cutoff) == 0
