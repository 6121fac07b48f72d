"""Changing a member's role: owners only, within their workspace, never leaving a
workspace without an owner, and ending no session."""

from __future__ import annotations

import pytest

from intake.domain.users import Role
from intake.service.accounts import NotAllowed
from intake.service.admin import AdminError, NotFoundError
from tests.unit.test_accounts import World

pytestmark = pytest.mark.anyio


@pytest.fixture
def world() -> World:
    return World()


async def _role(world: World, workspace_id: str, user_id: str) -> Role | None:
    found = await world.store.users.memberships(user_id)
    return next((m.role for m in found if m.workspace_id == workspace_id), None)


async def test_an_owner_promotes_a_member_who_then_demotes_the_first_owner(
    world: World,
) -> None:
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    member = await world.signed_in("m@example.com", ws, Role.MEMBER)
    joined = (await world.store.users.memberships(member.user.user_id))[0].created_at

    await world.accounts.users.change_role(owner, ws, member.user.user_id, Role.OWNER)
    promoted = await world.accounts.sessions.session(member.secret)
    assert promoted is not None  # the session goes on, with the new role
    await world.accounts.users.change_role(promoted, ws, owner.user.user_id, Role.MEMBER)

    assert await _role(world, ws, member.user.user_id) is Role.OWNER
    assert await _role(world, ws, owner.user.user_id) is Role.MEMBER
    assert (await world.store.users.memberships(member.user.user_id))[0].created_at == joined
    demoted = await world.accounts.sessions.session(owner.secret)
    assert demoted is not None
    assert not demoted.configures(ws)


async def test_the_last_owner_cannot_be_made_a_member(world: World) -> None:
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    await world.signed_in("m@example.com", ws, Role.MEMBER)

    with pytest.raises(AdminError, match="at least one owner"):
        await world.accounts.users.change_role(owner, ws, owner.user.user_id, Role.MEMBER)
    await world.accounts.users.change_role(owner, ws, owner.user.user_id, Role.OWNER)  # no change

    assert await _role(world, ws, owner.user.user_id) is Role.OWNER


async def test_a_member_cannot_change_roles_nor_anyone_in_another_workspace(
    world: World,
) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    member = await world.signed_in("m@example.com", ws, Role.MEMBER)
    stranger = await world.signed_in("s@example.com", other, Role.MEMBER)

    with pytest.raises(NotAllowed):
        await world.accounts.users.change_role(member, ws, member.user.user_id, Role.OWNER)
    with pytest.raises(NotFoundError):
        await world.accounts.users.change_role(owner, other, stranger.user.user_id, Role.OWNER)
    with pytest.raises(NotFoundError):  # a user of another workspace is no member here
        await world.accounts.users.change_role(owner, ws, stranger.user.user_id, Role.OWNER)
    with pytest.raises(NotFoundError):
        await world.accounts.users.change_role(owner, ws, "usr_\x00", Role.OWNER)

    assert await _role(world, ws, member.user.user_id) is Role.MEMBER
    assert await _role(world, ws, stranger.user.user_id) is None


async def test_set_role_finds_a_user_by_address(world: World) -> None:
    ws = await world.workspace()
    await world.signed_in("owner@example.com", ws, Role.OWNER)
    member = await world.signed_in("m@example.com", ws, Role.MEMBER)

    changed = await world.accounts.users.set_role(ws, " M@Example.com ", Role.OWNER)

    assert changed.user.user_id == member.user.user_id
    assert [m.role for m in changed.memberships] == [Role.OWNER]
    with pytest.raises(NotFoundError):
        await world.accounts.users.set_role("ws_\x00", "m@example.com", Role.OWNER)
