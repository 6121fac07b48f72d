"""Store.users: workspace users, memberships, one-time sign-in links and sessions, alike
on every store."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from intake.domain import ids
from intake.domain.users import Membership, Role, Session, SignInToken, User
from intake.ports.store import Store
from tests.contract.builders import T0, workspace

pytestmark = pytest.mark.anyio


def user(user_id: str = "usr_1", email: str = "ada@example.com", minutes: int = 0) -> User:
    return User(user_id=user_id, email=email, created_at=T0 + timedelta(minutes=minutes))


def membership(
    user_id: str = "usr_1", workspace_id: str = "ws_1", role: Role = Role.OWNER
) -> Membership:
    return Membership(user_id=user_id, workspace_id=workspace_id, role=role, created_at=T0)


def token(secret: str = "link-1", user_id: str = "usr_1") -> SignInToken:
    return SignInToken(
        token_hash=ids.hash_secret(secret),
        user_id=user_id,
        created_at=T0,
        expires_at=T0 + timedelta(hours=24),
    )


def session(session_id: str = "ses_1", user_id: str = "usr_1") -> Session:
    return Session(
        session_id=session_id,
        token_hash=ids.hash_secret(session_id + "-secret"),
        user_id=user_id,
        created_at=T0,
        last_seen_at=T0,
        expires_at=T0 + timedelta(days=14),
    )


@pytest.fixture
async def users_store(store: Store) -> Store:
    await store.workspaces.add(workspace("ws_1"))
    await store.workspaces.add(workspace("ws_2", "Other"))
    return store


async def test_a_user_is_kept_with_its_first_membership(users_store: Store) -> None:
    assert await users_store.users.add(user(), membership()) is True

    assert await users_store.users.get("usr_1") == user()
    assert await users_store.users.find_by_email("ada@example.com") == user()
    assert await users_store.users.memberships("usr_1") == [membership()]
    assert await users_store.users.find_by_email("bob@example.com") is None
    assert await users_store.users.get("usr_2") is None


async def test_an_address_is_one_user(users_store: Store) -> None:
    await users_store.users.add(user(), membership())

    again = await users_store.users.add(user("usr_2"), membership("usr_2", "ws_2"))

    assert again is False
    assert await users_store.users.get("usr_2") is None
    assert await users_store.users.workspace_memberships("ws_2") == []


async def test_users_are_listed_oldest_first_and_by_workspace(users_store: Store) -> None:
    await users_store.users.add(user("usr_b", "b@example.com", 2), membership("usr_b", "ws_2"))
    await users_store.users.add(user("usr_a", "a@example.com", 1), membership("usr_a"))
    await users_store.users.add_membership(membership("usr_b", "ws_1", Role.MEMBER))

    everyone = await users_store.users.list_users()
    in_ws2 = await users_store.users.list_users("ws_2")

    assert [u.user_id for u in everyone] == ["usr_a", "usr_b"]
    assert [u.user_id for u in in_ws2] == ["usr_b"]
    roles = {m.user_id: m.role for m in await users_store.users.workspace_memberships("ws_1")}
    assert roles == {"usr_a": Role.OWNER, "usr_b": Role.MEMBER}


async def test_members_memberships_are_read_at_once_by_user_then_workspace(
    users_store: Store,
) -> None:
    await users_store.workspaces.add(workspace("ws_3", "Third"))
    await users_store.users.add(user("usr_b", "b@example.com"), membership("usr_b", "ws_3"))
    await users_store.users.add_membership(membership("usr_b", "ws_1", Role.MEMBER))
    await users_store.users.add(user("usr_a", "a@example.com"), membership("usr_a", "ws_2"))
    await users_store.users.add(user("usr_c", "c@example.com"), membership("usr_c", "ws_3"))

    everyone = await users_store.users.memberships_of_members()
    of_ws1 = await users_store.users.memberships_of_members("ws_1")

    assert everyone == [
        *await users_store.users.memberships("usr_a"),
        *await users_store.users.memberships("usr_b"),
        *await users_store.users.memberships("usr_c"),
    ]
    assert [(m.user_id, m.workspace_id) for m in everyone] == [
        ("usr_a", "ws_2"),
        ("usr_b", "ws_1"),
        ("usr_b", "ws_3"),
        ("usr_c", "ws_3"),
    ]
    assert of_ws1 == await users_store.users.memberships("usr_b")  # ws_3 too
    assert await users_store.users.memberships_of_members("ws_none") == []


async def test_a_membership_is_replaced_and_removed(users_store: Store) -> None:
    await users_store.users.add(user(), membership())

    await users_store.users.add_membership(membership(role=Role.MEMBER))
    assert await users_store.users.memberships("usr_1") == [membership(role=Role.MEMBER)]

    assert await users_store.users.remove_membership("usr_1", "ws_1") is True
    assert await users_store.users.remove_membership("usr_1", "ws_1") is False
    assert await users_store.users.memberships("usr_1") == []


async def test_the_last_owner_is_neither_demoted_nor_removed(users_store: Store) -> None:
    await users_store.users.add(user(), membership())
    await users_store.users.add(
        user("usr_2", "bo@example.com"), membership("usr_2", role=Role.MEMBER)
    )

    assert await users_store.users.set_role("usr_1", "ws_1", Role.MEMBER) is False
    assert await users_store.users.remove_membership("usr_1", "ws_1") is False
    assert await users_store.users.set_role("usr_3", "ws_1", Role.OWNER) is False

    assert await users_store.users.set_role("usr_2", "ws_1", Role.OWNER) is True
    assert await users_store.users.set_role("usr_1", "ws_1", Role.MEMBER) is True
    assert [m.role for m in await users_store.users.workspace_memberships("ws_1")] == [
        Role.MEMBER,
        Role.OWNER,
    ]
    assert await users_store.users.remove_membership("usr_1", "ws_1") is True
    assert await users_store.users.remove_membership("usr_2", "ws_1") is False


@pytest.mark.parametrize("step", ["demote", "remove", "remove_user"])
async def test_owners_demoting_each_other_at_once_leave_one_owner(
    users_store: Store, step: str
) -> None:
    owners = [f"usr_{n}" for n in range(1, 7)]
    for n, user_id in enumerate(owners):
        await users_store.users.add(user(user_id, f"o{n}@example.com"), membership(user_id))

    async def change(user_id: str) -> bool:
        if step == "demote":
            return await users_store.users.set_role(user_id, "ws_1", Role.MEMBER)
        if step == "remove_user":
            return await users_store.users.remove(user_id)
        return await users_store.users.remove_membership(user_id, "ws_1")

    results = await asyncio.gather(*(change(u) for u in owners))

    assert sum(results) == len(owners) - 1
    left = await users_store.users.workspace_memberships("ws_1")
    assert [m.role for m in left].count(Role.OWNER) == 1


async def test_a_password_is_set(users_store: Store) -> None:
    await users_store.users.add(user(), membership())

    await users_store.users.set_password("usr_1", "$argon2id$v=19$stand-in")

    found = await users_store.users.get("usr_1")
    assert found is not None
    assert found.password_hash == "$argon2id$v=19$stand-in"


async def test_a_link_is_used_once(users_store: Store) -> None:
    await users_store.users.add(user(), membership())
    await users_store.users.add_token(token())

    first = await users_store.users.use_token(ids.hash_secret("link-1"), T0 + timedelta(hours=1))
    second = await users_store.users.use_token(ids.hash_secret("link-1"), T0 + timedelta(hours=1))

    assert first is not None
    assert first.user_id == "usr_1"
    assert first.used_at == T0 + timedelta(hours=1)
    assert second is None
    assert await users_store.users.use_token(ids.hash_secret("unknown"), T0) is None


async def test_a_link_expires_after_its_time(users_store: Store) -> None:
    await users_store.users.add(user(), membership())
    await users_store.users.add_token(token())

    late = T0 + timedelta(hours=24)

    assert await users_store.users.use_token(ids.hash_secret("link-1"), late) is None


async def test_of_two_uses_at_once_one_wins(users_store: Store) -> None:
    await users_store.users.add(user(), membership())
    await users_store.users.add_token(token())

    results = await asyncio.gather(
        *(users_store.users.use_token(ids.hash_secret("link-1"), T0) for _ in range(5))
    )

    assert sum(r is not None for r in results) == 1


async def test_sessions_are_found_touched_and_ended(users_store: Store) -> None:
    await users_store.users.add(user(), membership())
    await users_store.users.add_session(session("ses_1"))
    await users_store.users.add_session(session("ses_2"))
    later = T0 + timedelta(minutes=7)

    await users_store.users.touch_session("ses_1", later)
    found = await users_store.users.find_session(ids.hash_secret("ses_1-secret"))

    assert found is not None
    assert found.last_seen_at == later
    assert found.user_id == "usr_1"
    await users_store.users.end_session("ses_1")
    assert await users_store.users.find_session(ids.hash_secret("ses_1-secret")) is None
    assert await users_store.users.find_session(ids.hash_secret("ses_2-secret")) == session("ses_2")


async def test_ending_a_users_sessions_can_keep_one(users_store: Store) -> None:
    await users_store.users.add(user(), membership())
    await users_store.users.add(user("usr_2", "bob@example.com"), membership("usr_2"))
    for name in ("ses_1", "ses_2", "ses_3"):
        await users_store.users.add_session(session(name))
    await users_store.users.add_session(session("ses_bob", "usr_2"))

    ended = await users_store.users.end_sessions("usr_1", keep="ses_2")

    assert ended == 2
    assert await users_store.users.find_session(ids.hash_secret("ses_2-secret")) is not None
    assert await users_store.users.find_session(ids.hash_secret("ses_1-secret")) is None
    assert await users_store.users.find_session(ids.hash_secret("ses_bob-secret")) is not None
    assert await users_store.users.end_sessions("usr_1") == 1


async def test_removing_a_user_removes_its_memberships_links_and_sessions(
    users_store: Store,
) -> None:
    await users_store.users.add(user(), membership())
    await users_store.users.add(user("usr_2", "bo@example.com"), membership("usr_2"))
    await users_store.users.add_membership(membership(workspace_id="ws_2", role=Role.MEMBER))
    await users_store.users.add_token(token())
    await users_store.users.add_session(session())

    assert await users_store.users.remove("usr_1") is True

    assert await users_store.users.get("usr_1") is None
    assert await users_store.users.memberships("usr_1") == []
    assert await users_store.users.find_session(ids.hash_secret("ses_1-secret")) is None
    assert await users_store.users.use_token(ids.hash_secret("link-1"), T0) is None
    assert await users_store.users.remove("usr_1") is False
    # The address is free again.
    assert await users_store.users.add(user("usr_9"), membership("usr_9")) is True


async def test_the_last_owner_of_a_workspace_is_not_removed(users_store: Store) -> None:
    await users_store.users.add(user(), membership(workspace_id="ws_2", role=Role.MEMBER))
    await users_store.users.add_membership(membership())  # the only owner of ws_1
    await users_store.users.add(user("usr_2", "bo@example.com"), membership("usr_2", "ws_2"))
    await users_store.users.add_session(session())

    assert await users_store.users.remove("usr_1") is False

    assert await users_store.users.get("usr_1") == user()
    assert len(await users_store.users.memberships("usr_1")) == 2
    assert await users_store.users.find_session(ids.hash_secret("ses_1-secret")) is not None
    await users_store.users.add_membership(membership("usr_2", "ws_1"))
    assert await users_store.users.remove("usr_1") is True
    assert await users_store.users.remove("usr_2") is False  # now the last owner of both


async def test_a_link_is_found_without_being_used(users_store: Store) -> None:
    await users_store.users.add(user(), membership())
    await users_store.users.add_token(token())

    found = await users_store.users.find_token(ids.hash_secret("link-1"))

    assert found == token()
    assert await users_store.users.find_token(ids.hash_secret("unknown")) is None
    assert await users_store.users.use_token(ids.hash_secret("link-1"), T0) is not None
    used = await users_store.users.find_token(ids.hash_secret("link-1"))
    assert used is not None
    assert used.used_at == T0
