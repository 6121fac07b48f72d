"""Users and memberships: made by `intake user create` or an owner's invitation, listed,
and removed (which ends their sessions)."""

from __future__ import annotations

from email.message import EmailMessage

from attrs import frozen

from intake.domain.users import InvalidEmail, Membership, Role, User, normalise_email
from intake.ports.senders import MailRejected, MailUnavailable
from intake.service.accounts.base import AccountsBase, NewUser, SignedIn
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.short_lists import Position, ShortPage, short_page


@frozen
class Member:
    user: User
    memberships: tuple[Membership, ...]


class PeopleAccounts(AccountsBase):
    async def create_user(self, email: str, workspace_id: str, role: Role) -> NewUser:
        """A new user, member of one workspace, and the one-time link that sets their
        password (valid 24 hours). An address already used is refused."""
        address = await self._checked(email, workspace_id)
        now = self._clock.now()
        user = User(user_id=self._id("usr"), email=address, created_at=now)
        membership = Membership(user.user_id, workspace_id, role, now)
        if not await self._store.users.add(user, membership):
            raise AdminError("a user with this email address exists", field="email")
        return NewUser(user, membership, await self._new_link(user.user_id, now))

    async def ensure_user(self, email: str, workspace_id: str, role: Role) -> NewUser:
        """For `intake demo`: the user of this address in the workspace, made (or added to
        the workspace) with `role` when missing; one already there keeps their role. A
        fresh one-time link comes with them while they have no password; once they have
        one, none (link None): a link resets the password, and one chosen stays theirs."""
        address = await self._checked(email, workspace_id)
        user = await self._store.users.find_by_email(address)
        if user is None:
            return await self.create_user(address, workspace_id, role)
        now = self._clock.now()
        memberships = await self._store.users.memberships(user.user_id)
        membership = next((m for m in memberships if m.workspace_id == workspace_id), None)
        if membership is None:
            membership = Membership(user.user_id, workspace_id, role, now)
            await self._store.users.add_membership(membership)
        if user.password_hash is not None:
            return NewUser(user, membership, None)
        return NewUser(user, membership, await self._new_link(user.user_id, now))

    async def invite(
        self, by: SignedIn, workspace_id: str, email: str, role: Role = Role.MEMBER
    ) -> NewUser:
        """An owner adds someone to their workspace. Someone new gets a link, by mail
        when mail is set up, else returned to be shown once. An existing user is added
        with no link: a link resets a password, and must not reach another person."""
        by.require_owner(workspace_id)
        address = await self._checked(email, workspace_id)
        existing = await self._store.users.find_by_email(address)
        if existing is None:
            created = await self.create_user(address, workspace_id, role)
            return await self._deliver(created)
        if any(
            m.workspace_id == workspace_id
            for m in await self._store.users.memberships(existing.user_id)
        ):
            raise AdminError("already a member of this workspace", field="email")
        membership = Membership(existing.user_id, workspace_id, role, self._clock.now())
        await self._store.users.add_membership(membership)
        if existing.password_hash is None:
            link = await self._new_link(existing.user_id, self._clock.now())
            return await self._deliver(NewUser(existing, membership, link))
        return NewUser(existing, membership, None)

    async def workspace_members(self, by: SignedIn, workspace_id: str) -> list[Member]:
        """The members of a workspace `by` belongs to, each with their role there only."""
        if by.role_in(workspace_id) is None:
            raise NotFoundError("no such workspace")
        roles = await self._store.users.workspace_memberships(workspace_id)
        users = {u.user_id: u for u in await self._store.users.list_users(workspace_id)}
        return [Member(users[m.user_id], (m,)) for m in roles if m.user_id in users]

    async def member_page(
        self, by: SignedIn, workspace_id: str, limit: int, cursor: str | None
    ) -> ShortPage[Member]:
        """`limit` of `workspace_members` after `cursor`, the newest membership first."""
        members = await self.workspace_members(by, workspace_id)
        return short_page(members, _member_position, limit, cursor)

    async def users(self, workspace_id: str | None = None) -> list[Member]:
        found = await self._store.users.list_users(workspace_id)
        return [
            Member(user, tuple(await self._store.users.memberships(user.user_id))) for user in found
        ]

    async def remove_user(self, user_ref: str) -> User:
        """By id or email address: the user, memberships, links and sessions go."""
        user = await self._user(user_ref)
        if user is None or not await self._store.users.remove(user.user_id):
            raise NotFoundError(f"no user {user_ref}")
        return user

    async def remove_member(self, by: SignedIn, workspace_id: str, user_id: str) -> None:
        """An owner removes someone from the workspace; their sessions end. Someone left
        in no workspace is removed altogether. The last owner stays."""
        by.require_owner(workspace_id)
        members = await self._store.users.workspace_memberships(workspace_id)
        target = next((m for m in members if m.user_id == user_id), None)
        if target is None:
            raise NotFoundError("no such member")
        if not await self._store.users.remove_membership(user_id, workspace_id):
            raise AdminError("a workspace keeps at least one owner")
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
            raise AdminError("a workspace keeps at least one owner; make another owner first")
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

    async def _deliver(self, created: NewUser) -> NewUser:
        if self._mailer is None or created.link is None:
            return created
        try:
            await self._mailer.send(self._invitation(created.user.email, created.link))
        except (MailUnavailable, MailRejected):
            return created  # not sent: shown once instead, so the invitation still works
        return NewUser(created.user, created.membership, None, mailed=True)

    def _invitation(self, to: str, link: str) -> EmailMessage:
        message = EmailMessage()
        message["From"] = self._settings.mail_from
        message["To"] = to
        message["Subject"] = "Your intake dashboard sign-in link"
        message.set_content(
            "You have been given access to a workspace on intake.\n\n"
            f"Choose your password here (the link works once, for 24 hours):\n{link}\n"
        )
        return message


def _member_position(member: Member) -> Position:
    return (member.memberships[0].created_at, member.user.user_id)
