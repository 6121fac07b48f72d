"""The rules of `Accounts`: who may invite and remove whom, what a link and a password
change do to sessions, what an invitation sends, and the one answer for failed sign-ins."""

from __future__ import annotations

import pytest

from intake.adapters.memory import FakeClock, FakeMailer, InMemoryStore, SeededIdSource
from intake.adapters.password_argon2 import Argon2PasswordHasher
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.domain.users import InvitationStatus, Membership, Role
from intake.ports.senders import MailUnavailable
from intake.service.accounts import (
    AccountExists,
    Accounts,
    AccountSettings,
    LinkRefused,
    NotAllowed,
    SignedIn,
    SignInRefused,
)
from intake.service.admin import AdminError, NotFoundError, owner_services
from tests.support.sqlite_rows import stored_text

pytestmark = pytest.mark.anyio

PASSWORD = "correct horse battery"
BASE = "https://intake.example"


class World:
    def __init__(self, mailer: FakeMailer | None = None) -> None:
        self.store = InMemoryStore()
        self.clock = FakeClock()
        self.mailer = mailer
        ids = SeededIdSource()
        self.services = owner_services(self.store, self.clock, ids)
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
        return (await self.services.workspaces.create(name)).workspace_id

    async def signed_in(self, email: str, workspace_id: str, role: Role) -> SignedIn:
        created = await self.accounts.users.create(email, workspace_id, role)
        assert created.link is not None
        return await self.accounts.sessions.use_link(created.link.rsplit("/", 1)[1], PASSWORD)


@pytest.fixture
def world() -> World:
    return World()


async def test_a_link_is_the_base_url_and_a_secret_kept_only_hashed(world: World) -> None:
    ws = await world.workspace()

    created = await world.accounts.users.create("Ada@Example.com", ws, Role.OWNER)

    assert created.link is not None
    assert created.link.startswith(BASE + "/dashboard/sign-in/")
    secret = created.link.rsplit("/", 1)[1]
    assert len(secret) == 39
    assert created.user.email == "ada@example.com"
    assert created.user.password_hash is None
    assert secret not in await stored_text(world.store)


async def test_a_used_link_is_refused(world: World) -> None:
    ws = await world.workspace()
    created = await world.accounts.users.create("ada@example.com", ws, Role.OWNER)
    assert created.link is not None
    token = created.link.rsplit("/", 1)[1]
    await world.accounts.sessions.use_link(token, PASSWORD)

    with pytest.raises(LinkRefused):
        await world.accounts.sessions.use_link(token, PASSWORD)
    with pytest.raises(LinkRefused):
        await world.accounts.sessions.use_link("not-a-token", PASSWORD)


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
            await world.accounts.sessions.sign_in(email, password, "192.0.2.1")
    signed = await world.accounts.sessions.sign_in(" ADA@example.com", PASSWORD, "192.0.2.1")
    assert signed.user.email == "ada@example.com"


async def test_changing_the_password_ends_the_other_sessions_only(world: World) -> None:
    ws = await world.workspace()
    first = await world.signed_in("ada@example.com", ws, Role.OWNER)
    second = await world.accounts.sessions.sign_in("ada@example.com", PASSWORD, "192.0.2.1")

    changed = await world.accounts.sessions.change_password(second, PASSWORD, "a new long password")

    assert await world.accounts.sessions.session(first.secret) is None
    assert (
        await world.accounts.sessions.session(second.secret) is None
    )  # renewed under a new secret
    assert await world.accounts.sessions.session(changed.secret) is not None
    with pytest.raises(SignInRefused):
        await world.accounts.sessions.sign_in("ada@example.com", PASSWORD, "192.0.2.1")
    with pytest.raises(AdminError) as refused:
        await world.accounts.sessions.change_password(changed, "wrong", "another long password")
    assert refused.value.field == "current_password"


async def test_sessions_end_after_their_lifetime_even_when_used(world: World) -> None:
    ws = await world.workspace()
    signed = await world.signed_in("ada@example.com", ws, Role.OWNER)
    for _ in range(13):
        world.clock.advance(24 * 3600)
        assert await world.accounts.sessions.session(signed.secret) is not None

    world.clock.advance(24 * 3600)

    assert await world.accounts.sessions.session(signed.secret) is None


async def test_the_csrf_token_belongs_to_the_session(world: World) -> None:
    ws = await world.workspace()
    first = await world.signed_in("ada@example.com", ws, Role.OWNER)
    second = await world.accounts.sessions.sign_in("ada@example.com", PASSWORD, "192.0.2.1")

    found = await world.accounts.sessions.session(second.secret)

    assert found is not None
    assert found.csrf == second.csrf != first.csrf


async def test_an_owner_invites_and_a_member_cannot(world: World) -> None:
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    member = await world.signed_in("m@example.com", ws, Role.MEMBER)

    sent = await world.accounts.invitations.invite(owner, ws, " New@example.com ")

    assert sent.invitation.email == "new@example.com"
    assert sent.invitation.role is Role.MEMBER
    assert (sent.mailed, sent.mail_set_up) == (False, False)
    assert await world.store.users.find_by_email("new@example.com") is None  # no user yet
    with pytest.raises(NotAllowed):
        await world.accounts.invitations.invite(member, ws, "third@example.com")
    with pytest.raises(AdminError) as malformed:
        await world.accounts.invitations.invite(owner, ws, "not-an-address")
    assert malformed.value.field == "email"


async def test_an_owner_cannot_act_on_another_workspace(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    stranger = await world.signed_in("s@example.com", other, Role.OWNER)
    theirs = await world.accounts.invitations.invite(stranger, other, "x@example.com")

    with pytest.raises(NotFoundError):
        await world.accounts.invitations.invite(owner, other, "x@example.com")
    with pytest.raises(NotFoundError):
        await world.accounts.users.remove_member(owner, other, owner.user.user_id)
    for act in (world.accounts.invitations.resend, world.accounts.invitations.revoke):
        with pytest.raises(NotFoundError):
            await act(owner, theirs.invitation.invitation_id)


async def test_an_invitation_is_the_same_whoever_the_address_is(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    await world.signed_in("bob@example.com", other, Role.OWNER)
    await world.accounts.users.create("nopassword@example.com", other, Role.OWNER)

    answers = [
        await world.accounts.invitations.invite(owner, ws, address)
        for address in ("bob@example.com", "nopassword@example.com", "owner@example.com", "n@x.io")
    ]

    assert {(a.mailed, a.mail_set_up, a.invitation.status) for a in answers} == {
        (False, False, InvitationStatus.PENDING)
    }
    # Nothing changed for anyone until they accept.
    bob = await world.accounts.sessions.sign_in("bob@example.com", PASSWORD, "192.0.2.1")
    assert bob.role_in(ws) is None
    assert [i.workspace_name for i in await world.accounts.invitations.mine(bob)] == ["Acme"]


async def test_only_the_invitee_accepts_and_only_once(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    bob = await world.signed_in("bob@example.com", other, Role.OWNER)
    eve = await world.signed_in("eve@example.com", other, Role.MEMBER)
    sent = await world.accounts.invitations.invite(owner, ws, "bob@example.com", Role.OWNER)
    invitation_id = sent.invitation.invitation_id

    with pytest.raises(NotFoundError):
        await world.accounts.invitations.accept(eve, invitation_id)
    with pytest.raises(NotFoundError):
        await world.accounts.invitations.decline(eve, invitation_id)
    await world.accounts.invitations.accept(bob, invitation_id)

    again = await world.accounts.sessions.sign_in("bob@example.com", PASSWORD, "192.0.2.1")
    assert again.role_in(ws) is Role.OWNER
    assert again.role_in(other) is Role.OWNER
    assert await world.accounts.invitations.mine(again) == []
    with pytest.raises(NotFoundError):
        await world.accounts.invitations.accept(bob, invitation_id)


async def test_a_declined_revoked_or_expired_invitation_makes_no_member(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    bob = await world.signed_in("bob@example.com", other, Role.OWNER)

    declined = await world.accounts.invitations.invite(owner, ws, "bob@example.com")
    await world.accounts.invitations.decline(bob, declined.invitation.invitation_id)
    assert await world.accounts.invitations.of_workspace(owner, ws) == []
    revoked = await world.accounts.invitations.invite(owner, ws, "bob@example.com")
    await world.accounts.invitations.revoke(owner, revoked.invitation.invitation_id)
    with pytest.raises(NotFoundError):
        await world.accounts.invitations.accept(bob, revoked.invitation.invitation_id)
    expiring = await world.accounts.invitations.invite(owner, ws, "bob@example.com")
    world.clock.advance(7 * 24 * 3600)
    assert await world.accounts.invitations.mine(bob) == []
    with pytest.raises(NotFoundError):
        await world.accounts.invitations.accept(bob, expiring.invitation.invitation_id)
    (listed,) = await world.accounts.invitations.of_workspace(owner, ws)
    assert listed.expired(world.clock.now())

    renewed = await world.accounts.invitations.resend(owner, expiring.invitation.invitation_id)

    assert renewed.invitation.invitation_id == expiring.invitation.invitation_id
    assert renewed.invitation.expires_at > world.clock.now()
    await world.accounts.invitations.accept(bob, renewed.invitation.invitation_id)
    assert (await world.accounts.sessions.sign_in("bob@example.com", PASSWORD, "c")).role_in(
        ws
    ) is (Role.MEMBER)


async def test_an_invitation_is_mailed_naming_the_workspace_and_the_inviter() -> None:
    world = World(FakeMailer())
    ws = await world.workspace("Acme Support")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)

    sent = await world.accounts.invitations.invite(owner, ws, "new@example.com")

    assert sent.mailed is True
    assert world.mailer is not None
    (message,) = world.mailer.sent
    assert message["To"] == "new@example.com"
    assert "owner@example.com" in message["Subject"]
    body = message.get_content()
    assert '"Acme Support"' in body
    assert "owner@example.com" in body
    assert BASE + "/dashboard/invitations/" in body
    assert "/dashboard/sign-in/" not in body


async def test_a_mailed_link_makes_a_new_account_only_for_an_address_without_one() -> None:
    world = World(FakeMailer())
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    await world.accounts.users.create("ghost@example.com", other, Role.OWNER)  # no password
    await world.accounts.invitations.invite(owner, ws, "new@example.com")
    await world.accounts.invitations.invite(owner, ws, "ghost@example.com")
    assert world.mailer is not None
    new_token, ghost_token = (
        m.get_content().split("/dashboard/invitations/")[1].split()[0] for m in world.mailer.sent
    )

    linked = await world.accounts.invitations.by_link(ghost_token)
    assert linked.has_account is True
    with pytest.raises(AccountExists):
        await world.accounts.invitations.join_by_link(ghost_token, PASSWORD)
    ghost = await world.store.users.find_by_email("ghost@example.com")
    assert ghost is not None
    assert ghost.password_hash is None

    joined = await world.accounts.invitations.join_by_link(new_token, PASSWORD)

    assert joined.user.email == "new@example.com"
    assert joined.role_in(ws) is Role.MEMBER
    with pytest.raises(LinkRefused):
        await world.accounts.invitations.join_by_link(new_token, PASSWORD)
    with pytest.raises(LinkRefused):
        await world.accounts.invitations.by_link("abc")


async def test_an_invitation_not_mailed_still_waits() -> None:
    world = World(FakeMailer())
    assert world.mailer is not None
    world.mailer.script(MailUnavailable("down"))
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)

    sent = await world.accounts.invitations.invite(owner, ws, "new@example.com")

    assert (sent.mailed, sent.mail_set_up) == (False, True)
    assert [
        o.invitation.email for o in await world.accounts.invitations.of_workspace(owner, ws)
    ] == ["new@example.com"]


async def test_a_member_leaves_but_the_last_owner_stays(world: World) -> None:
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    member = await world.signed_in("m@example.com", ws, Role.MEMBER)

    await world.accounts.users.leave(member, ws)

    assert await world.store.users.memberships(member.user.user_id) == []
    assert await world.store.users.get(member.user.user_id) is not None  # keeps the account
    with pytest.raises(AdminError):
        await world.accounts.users.leave(owner, ws)
    with pytest.raises(NotFoundError):
        await world.accounts.users.leave(member, ws)


async def test_removing_a_member_ends_their_sessions(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)
    member = await world.signed_in("m@example.com", ws, Role.MEMBER)
    both = await world.signed_in("both@example.com", ws, Role.MEMBER)
    await world.store.users.add_membership(
        Membership(both.user.user_id, other, Role.MEMBER, world.clock.now())
    )

    await world.accounts.users.remove_member(owner, ws, member.user.user_id)
    await world.accounts.users.remove_member(owner, ws, both.user.user_id)

    assert await world.accounts.sessions.session(member.secret) is None
    assert await world.store.users.get(member.user.user_id) is None  # in no workspace left
    assert await world.accounts.sessions.session(both.secret) is None
    kept = await world.store.users.get(both.user.user_id)
    assert kept is not None  # still a member of the other workspace


async def test_the_last_owner_stays(world: World) -> None:
    ws = await world.workspace()
    owner = await world.signed_in("owner@example.com", ws, Role.OWNER)

    with pytest.raises(AdminError):
        await world.accounts.users.remove_member(owner, ws, owner.user.user_id)


async def test_create_user_refusals(world: World) -> None:
    ws = await world.workspace()
    await world.accounts.users.create("ada@example.com", ws, Role.OWNER)

    with pytest.raises(AdminError) as taken:
        await world.accounts.users.create("ADA@example.com", ws, Role.MEMBER)
    with pytest.raises(AdminError) as malformed:
        await world.accounts.users.create("ada@", ws, Role.MEMBER)
    with pytest.raises(NotFoundError):
        await world.accounts.users.create("bob@example.com", "ws_nope", Role.MEMBER)
    assert taken.value.field == malformed.value.field == "email"


async def test_ensure_user_links_only_while_there_is_no_password(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    member = await world.accounts.users.create("demo@example.com", other, Role.MEMBER)

    added = await world.accounts.users.ensure("Demo@example.com", ws, Role.OWNER)
    again = await world.accounts.users.ensure("demo@example.com", ws, Role.MEMBER)

    # One user: added to the workspace once, as an owner, keeping that role.
    assert added.user.user_id == again.user.user_id == member.user.user_id
    assert (added.membership.role, again.membership.role) == (Role.OWNER, Role.OWNER)
    assert len(await world.store.users.memberships(member.user.user_id)) == 2
    assert added.link is not None
    assert again.link is not None
    assert added.link != again.link
    await world.accounts.sessions.use_link(again.link.rsplit("/", 1)[1], PASSWORD)

    with_password = await world.accounts.users.ensure("demo@example.com", ws, Role.OWNER)

    assert with_password.link is None
    assert (
        await world.accounts.sessions.sign_in("demo@example.com", PASSWORD, "c")
    ).user.email == ("demo@example.com")
    with pytest.raises(NotFoundError):
        await world.accounts.users.ensure("demo@example.com", "ws_none", Role.OWNER)


async def test_listed_users_come_with_every_membership_of_theirs(world: World) -> None:
    ws, other = await world.workspace(), await world.workspace("Other")
    ada = (await world.accounts.users.create("ada@example.com", ws, Role.OWNER)).user
    bo = (await world.accounts.users.create("bo@example.com", other, Role.OWNER)).user
    await world.accounts.users.ensure("bo@example.com", ws, Role.MEMBER)

    everyone = await world.accounts.users.all()
    of_other = await world.accounts.users.all(other)

    in_order = sorted([(ws, Role.MEMBER), (other, Role.OWNER)])
    assert [(m.user, [(x.workspace_id, x.role) for x in m.memberships]) for m in everyone] == [
        (ada, [(ws, Role.OWNER)]),
        (bo, in_order),
    ]
    assert [(m.user, len(m.memberships)) for m in of_other] == [(bo, 2)]
    assert await world.accounts.users.all("ws_none") == []
