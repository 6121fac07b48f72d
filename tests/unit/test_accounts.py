"""The rules of `Accounts`: who may invite and remove whom, what a link and a password
change do to sessions, what an invitation sends, and the one answer for failed sign-ins."""

from __future__ import annotations

import pytest

from intake.adapters.memory import FakeClock, FakeMailer, InMemoryStore, SeededIdSource
from intake.adapters.password_argon2 import Argon2PasswordHasher
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.domain.users import Membership, Role
from intake.ports.senders import MailUnavailable
from intake.service.accounts import (
    Accounts,
    AccountSettings,
    LinkRefused,
    NotAllowed,
    SignedIn,
    SignInRefused,
)
from intake.service.admin import Admin, AdminError, NotFoundError

pytestmark = pytest.mark.anyio

PASSWORD = "correct horse battery"
BASE = "https://intake.example"


class World:
    def __init__(self, mailer: FakeMailer | None = None) -> None:
        self.store = InMemoryStore()
        self.clock = FakeClock()
        self.mailer = mailer
        ids = SeededIdSource()
        self.admin = Admin(self.store, self.clock, ids)
        self.accounts = Accounts(
            self.store,
            self.clock,
            ids,
            hasher=Argon2PasswordHasher(time_cost=1, memory_cost=1024),
            rate_limiter=InProcessRateLimiter(),
            settings=AccountSettings(base_url=BASE + "/", mail_from="intake@example.com"),
            mailer=mailer,
        )

    async def workspace(self, name: str = "Acme") -> str:
        return (await self.admin.create_workspace(name)).workspace_id

    async def signed_in(self, email: str, workspace_id: str, role: Role) -> SignedIn:
        created = await self.accounts.create_user(email, workspace_id, role)
        assert created.link is not None
        return await self.accounts.use_link(created.link.rsplit("/", 1)[1], PASSWORD)


@pytest.fixture
def world() -> World:
    return World()


async def test_a_link_is_the_base_url_and_a_secret_kept_only_hashed(world: World) -> None:
    ws = await world.workspace()

    created = await world.accounts.create_user("Ada@Example.com", ws, Role.OWNER)

    assert created.link is not None
    assert created.link.startswith(BASE + "/dashboard/sign-in/")
    secret = created.link.rsplit("/", 1)[1]
    assert len(secret) == 39
    assert created.user.email == "ada@example.com"
    assert created.user.password_hash is None
    assert secret not in repr(world.store.users._tokens)


async def test_a_used_link_is_refused(world: World) -> None:
    ws = await world.workspace()
    created = await world.accounts.create_user("ada@example.com", ws, Role.OWNER)
    assert created.link is not None
    token = created.link.rsplit("/", 1)[1]
    await world.accounts.use_link(token, PASSWORD)

    with pytest.raises(LinkRefused):
        await world.accounts.use_link(token, PASSWORD)
    with pytest.raises(LinkRefused):
        await world.accounts.use_link("not-a-token", PASSWORD)


async def test_the_password_is_stored_as_argon2id(world: World) -> None:
    ws = await world.workspace()
    signed = await world.signed_in("ada@example.com", ws, Role.OWNER)

    stored = await world.store.users.get(signed.user.user_id)

    assert stored is not None
    assert stored.password_hash is not None
    assert stored.password_hash.startswith("$argon2id$")
    assert PASSWORD not in stored.password_hash


async def test_sign_in_refuses_alike_wrong_unknown_and_malformed(world: World) -> None:
    ws = await world.workspace()
    await world.signed_in("ada@example.com", ws, Role.OWNER)

    for email, password in (
        ("ada@example.com", "wrong password"),
        ("bob@example.com", PASSWORD),
        ("not an address", PASSWORD),
        ("", ""),
    ):
        with pytest.raises(SignInRefused):
            await world.accounts.sign_in(email, password, "192.0.2.1")
    signed = await world.accounts.sign_in(" ADA@example.com", PASSWORD, "192.0.2.1")
    assert signed.user.email == "ada@example.com"


async def test_changing_the_password_ends_the_other_sessions_only(world: World) -> None:
    ws = await world.workspace()
    first = await world.signed_in("ada@example.com", ws, Role.OWNER)
    second = await world.accounts.sign_in("ada@example.com", PASSWORD, "192.0.2.1")

    changed = await world.accounts.change_password(second, PASSWORD, "a new long password")

    assert await world.accounts.session(first.secret) is None
    assert await world.accounts.session(second.secret) is None  # renewed under a new secret
    assert await world.accounts.session(changed.secret) is not None
    with pytest.raises(SignInRefused):
        await world.accounts.sign_in("ada@example.com", PASSWORD, "192.0.2.1")
    with pytest.raises(AdminError) as refused:
        await world.accounts.change_password(changed, "wrong", "another long password")
    assert refused.value.field == "current_password"


async def test_sessions_end_after_their_lifetime_even_when_used(world: World) -> None:
    ws = await world.workspace()
    signed = await world.signed_in("ada@example.com", ws, Role.OWNER)
    for _ in range(13):
        world.clock.advance(24 * 3600)
        assert await world.accounts.session(signed.secret) is not None

    world.clock.advance(24 * 3600)

    assert await world.accounts.session(signed.secret) is None


async def test_the_csrf_token_belongs_to_the_session(world: World) -> None:
    ws = await world.workspace()
    first = await world.signed_in("ada@example.com", ws, Role.OWNER)
    second = await world.accounts.sign_in("ada@example.com", PASSWORD, "192.0.2.1")

    found = await world.accounts.session(second.secret)

    assert found is not None
    assert found.csrf == second.csrf != first.csrf


async def test_an_owner_invites_and_a_member_cannot(world: World) -> None:
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)

    invited = await world.accounts.invite(owner, ws, "Member@example.com")

    assert invited.link is not None
    assert invited.mailed is False
    assert invited.membership.role is Role.MEMBER
    member = await world.accounts.use_link(invited.link.rsplit("/", 1)[1], PASSWORD)
    assert member.role_in(ws) is Role.MEMBER
    assert not member.configures(ws)
    assert owner.configures(ws)
    with pytest.raises(NotAllowed):
        await world.accounts.invite(member, ws, "third@example.com")
    with pytest.raises(AdminError) as twice:
        await world.accounts.invite(owner, ws, "member@example.com")
    assert twice.value.field == "email"


async def test_an_owner_cannot_act_on_another_workspace(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)

    with pytest.raises(NotFoundError):
        await world.accounts.invite(owner, other, "x@example.com")
    with pytest.raises(NotFoundError):
        await world.accounts.remove_member(owner, other, owner.user.user_id)


async def test_inviting_an_existing_user_shows_no_link(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    await world.signed_in("bob@example.com", other, Role.OWNER)

    invited = await world.accounts.invite(owner, ws, "bob@example.com", Role.OWNER)

    # A link would reset Bob's password: it must not reach the inviting owner.
    assert invited.link is None
    bob = await world.accounts.sign_in("bob@example.com", PASSWORD, "192.0.2.1")
    assert bob.role_in(ws) is Role.OWNER
    assert bob.role_in(other) is Role.OWNER


async def test_an_invitation_is_mailed_when_mail_is_set_up() -> None:
    world = World(FakeMailer())
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)

    invited = await world.accounts.invite(owner, ws, "new@example.com")

    assert invited.link is None
    assert invited.mailed is True
    assert world.mailer is not None
    (message,) = world.mailer.sent
    assert message["To"] == "new@example.com"
    assert BASE + "/dashboard/sign-in/" in message.get_content()


async def test_an_invitation_not_mailed_is_shown_instead() -> None:
    world = World(FakeMailer())
    assert world.mailer is not None
    world.mailer.script(MailUnavailable("down"))
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)

    invited = await world.accounts.invite(owner, ws, "new@example.com")

    assert invited.link is not None
    assert invited.mailed is False


async def test_removing_a_member_ends_their_sessions(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    member = await world.signed_in("m@example.com", ws, Role.MEMBER)
    both = await world.signed_in("both@example.com", ws, Role.MEMBER)
    await world.store.users.add_membership(
        Membership(both.user.user_id, other, Role.MEMBER, world.clock.now())
    )

    await world.accounts.remove_member(owner, ws, member.user.user_id)
    await world.accounts.remove_member(owner, ws, both.user.user_id)

    assert await world.accounts.session(member.secret) is None
    assert await world.store.users.get(member.user.user_id) is None  # in no workspace left
    assert await world.accounts.session(both.secret) is None
    kept = await world.store.users.get(both.user.user_id)
    assert kept is not None  # still a member of the other workspace


async def test_the_last_owner_stays(world: World) -> None:
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)

    with pytest.raises(AdminError):
        await world.accounts.remove_member(owner, ws, owner.user.user_id)


async def test_create_user_refusals(world: World) -> None:
    ws = await world.workspace()
    await world.accounts.create_user("ada@example.com", ws, Role.OWNER)

    with pytest.raises(AdminError) as taken:
        await world.accounts.create_user("ADA@example.com", ws, Role.MEMBER)
    with pytest.raises(AdminError) as malformed:
        await world.accounts.create_user("ada@", ws, Role.MEMBER)
    with pytest.raises(NotFoundError):
        await world.accounts.create_user("bob@example.com", "ws_nope", Role.MEMBER)
    assert taken.value.field == malformed.value.field == "email"


async def test_ensure_user_links_only_while_there_is_no_password(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    member = await world.accounts.create_user("demo@example.com", other, Role.MEMBER)

    added = await world.accounts.ensure_user("Demo@example.com", ws, Role.OWNER)
    again = await world.accounts.ensure_user("demo@example.com", ws, Role.MEMBER)

    # One user: added to the workspace once, as an owner, keeping that role.
    assert added.user.user_id == again.user.user_id == member.user.user_id
    assert (added.membership.role, again.membership.role) == (Role.OWNER, Role.OWNER)
    assert len(await world.store.users.memberships(member.user.user_id)) == 2
    assert added.link is not None
    assert again.link is not None
    assert added.link != again.link
    await world.accounts.use_link(again.link.rsplit("/", 1)[1], PASSWORD)

    with_password = await world.accounts.ensure_user("demo@example.com", ws, Role.OWNER)

    assert with_password.link is None
    assert (await world.accounts.sign_in("demo@example.com", PASSWORD, "c")).user.email == (
        "demo@example.com"
    )
    with pytest.raises(NotFoundError):
        await world.accounts.ensure_user("demo@example.com", "ws_none", Role.OWNER)
