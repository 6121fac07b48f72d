"""Users and memberships: made by `intake user create` (or `intake demo`), or by an
accepted invitation (invitations.py); listed, left, and removed (which ends their
sessions). A workspace keeps an owner through all of it."""

from __future__ import annotations

from attrs import frozen

from intake.domain.users import InvalidEmail, Membership, Role, User, normalise_email
from intake.service.accounts.base import AccountsBase, NewUser, SignedIn
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.short_lists import Position, ShortPage, short_page


@frozen
class Member:
    user: User
    memberships: tuple[Membership, ...]


# Why a change that would leave a workspace with no owner is refused; the stores hold
# the rule itself (UserRepository.set_role, remove_membership, remove).
KEEPS_AN_OWNER = "a workspace keeps at least one owner"


class Users(AccountsBase):
    """Users and their memberships."""

    async def create(self, email: str, workspace_id: str, role: Role) -> NewUser:
        """A new user, member of one workspace, and the one-time link that sets their
        password (valid 24 hours). An address already used is refused."""
        address = await self._checked(email, workspace_id)
        now = self._clock.now()
        user = User(user_id=self._id("usr"), email=address, created_at=now)
        membership = Membership(user.user_id, workspace_id, role, now)
        if not await self._store.users.add(user, membership):
            raise AdminError("a user with this email address exists", field="email")
        return NewUser(user, membership, await self._new_link(user.user_id, now))

    async def ensure(self, email: str, workspace_id: str, role: Role) -> NewUser:
        """For `intake demo`: the user of this address in the workspace, made (or added to
        the workspace) with `role` when missing; one already there keeps their role. A
        fresh one-time link comes with them while they have no password; once they have
        one, none (link None): a link resets the password, and one chosen stays theirs."""
        address = await self._checked(email, workspace_id)
        user = await self._store.users.find_by_email(address)
        if user is None:
            return await self.create(address, workspace_id, role)
        now = self._clock.now()
        memberships = await self._store.users.memberships(user.user_id)
        membership = next((m for m in memberships if m.workspace_id == workspace_id), None)
        if membership is None:
            membership = Membership(user.user_id, workspace_id, role, now)
            await self._store.users.add_membership(membership)
        if user.password_hash is not None:
            return NewUser(user, membership, None)
        return NewUser(user, membership, await self._new_link(user.user_id, now))

    async def members(self, by: SignedIn, workspace_id: str) -> list[Member]:
        """The members of a workspace `by` belongs to, each with their role there only."""
        if by.role_in(workspace_id) is None:
            raise NotFoundError("no such workspace")
        roles = await self._store.users.workspace_memberships(workspace_id)
        users = {u.user_id: u for u in await self._store.users.list_users(workspace_id)}
        return [Member(users[m.user_id], (m,)) for m in roles if m.user_id in users]

    async def member_page(
        self, by: SignedIn, workspace_id: str, limit: int, cursor: str | None
    ) -> ShortPage[Member]:
        """`limit` of `members` after `cursor`, the newest membership first."""
        members = await self.members(by, workspace_id)
        return short_page(members, _member_position, limit, cursor)

    async def all(self, workspace_id: str | None = None) -> list[Member]:
        """The workspace's users (every user, without one), each with every membership."""
        found = await self._store.users.list_users(workspace_id)
        held: dict[str, list[Membership]] = {}
        for membership in await self._store.users.memberships_of_members(workspace_id):
            held.setdefault(membership.user_id, []).append(membership)
        return [Member(user, tuple(held.get(user.user_id, ()))) for user in found]

    async def remove(self, user_ref: str) -> User:
        """By id or email address: the user, memberships, links and sessions go. The last
        owner of a workspace stays, as `set_role` keeps them an owner."""
        user = await self._user(user_ref)
        if user is None:
            raise NotFoundError(f"no user {user_ref}")
        if not await self._store.users.remove(user.user_id):
            if await self._store.users.get(user.user_id) is None:
                raise NotFoundError(f"no user {user_ref}")
            raise AdminError(KEEPS_AN_OWNER + "; make another owner first")
        return user

    async def password_link(self, user_ref: str) -> tuple[User, str]:
        """For `intake user link`: a new one-time link that sets the user's password, for
        the operator's terminal only (no owner's page ever shows one)."""
        user = await self._user(user_ref)
        if user is None:
            raise NotFoundError(f"no user {user_ref}")
        return user, await self._new_link(user.user_id, self._clock.now())

    async def leave(self, signed: SignedIn, workspace_id: str) -> None:
        """The signed-in user stops being a member of the workspace; its last owner
        cannot. They keep their account, to accept other invitations."""
        user_id = signed.user.user_id
        if signed.role_in(workspace_id) is None:
            raise NotFoundError("no such workspace")
        if not await self._store.users.remove_membership(user_id, workspace_id):
            if all(
                m.workspace_id != workspace_id for m in await self._store.users.memberships(user_id)
            ):
                raise NotFoundError("no such workspace")  # left already
            raise AdminError(KEEPS_AN_OWNER + "; make another owner first")

    async def remove_member(self, by: SignedIn, workspace_id: str, user_id: str) -> None:
        """An owner removes someone from the workspace; their sessions end. Someone left
        in no workspace is removed altogether. The last owner stays."""
        by.require_owner(workspace_id)
        members = await self._store.users.workspace_memberships(workspace_id)
        target = next((m for m in members if m.user_id == user_id), None)
        if target is None:
            raise NotFoundError("no such member")
        if not await self._store.users.remove_membership(user_id, workspace_id):
            raise AdminError(KEEPS_AN_OWNER)
        await self._store.users.end_sessions(user_id)
        if not await self._store.users.memberships(user_id):
            await self._store.users.remove(user_id)

    async def change_role(self, by: SignedIn, workspace_id: str, user_id: str, role: Role) -> None:
        """An owner makes a member an owner, or an owner a member (themselves too); the
        member's sessions go on, with the new role from their next page on."""
        by.require_owner(workspace_id)
        await self.set_role(workspace_id, user_id, role)

    async def set_role(self, workspace_id: str, user_ref: str, role: Role) -> Member:
        """For `intake user role` and owners: the member's role in the workspace, by user
        id or email address. The last owner stays an owner: a workspace no one can
        configure would need an operator to recover."""
        user = await self._user(user_ref)
        if user is None or "\x00" in workspace_id:
            raise NotFoundError("no such member")
        members = await self._store.users.workspace_memberships(workspace_id)
        target = next((m for m in members if m.user_id == user.user_id), None)
        if target is None:
            raise NotFoundError("no such member")
        # The store checks and changes in one step, so owners demoting each other at
        # once cannot leave the workspace without one.
        if not await self._store.users.set_role(user.user_id, workspace_id, role):
            raise AdminError(KEEPS_AN_OWNER + "; make another owner first")
        return Member(user, (Membership(target.user_id, workspace_id, role, target.created_at),))

    async def _user(self, user_ref: str) -> User | None:
        """By id or email address."""
        if "\x00" in user_ref:  # no id holds one, and PostgreSQL text cannot
            return None
        user = await self._store.users.get(user_ref)
        if user is None and "@" in user_ref:
            user = await self._store.users.find_by_email(user_ref.strip().lower())
        return user

    async def _checked(self, email: str, workspace_id: str) -> str:
        try:
            address = normalise_email(email)
        except InvalidEmail as error:
            raise AdminError(str(error), field="email") from None
        if "\x00" in workspace_id or await self._store.workspaces.get(workspace_id) is None:
            raise NotFoundError(f"no workspace {workspace_id}")
        return address


def _member_position(member: Member) -> Position:
    return (member.memberships[0].created_at, member.user.user_id)
