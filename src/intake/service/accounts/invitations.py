"""Invitations: an owner offers a role in their workspace to an address; it becomes a
membership only when the user of that address accepts it, signed in as themselves, or,
for an address with no user yet, when its mailed link makes a new one.

What the inviter is told never depends on the address: not whether it has a user, a
password or a membership already. Nothing the inviter receives opens an account: the
link goes only by mail to the invited address, and it makes a new user only for an
address that has none; an existing user accepts signed in."""

from __future__ import annotations

from datetime import datetime
from email.message import EmailMessage

from attrs import frozen

from intake.domain import ids
from intake.domain.ratelimit import Window
from intake.domain.users import (
    INVITATION_LIFETIME,
    InvalidEmail,
    Invitation,
    InvitationStatus,
    Role,
    User,
    normalise_email,
)
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.passwords import PasswordHasher
from intake.ports.rate_limiter import RateLimiter
from intake.ports.senders import Mailer, MailRejected, MailUnavailable
from intake.ports.store import Store
from intake.service.accounts.base import INVITATION_PATH, AccountsBase, AccountSettings, SignedIn
from intake.service.accounts.errors import AccountExists, LinkRefused, TooManyInvitations
from intake.service.accounts.sign_in import Sessions, checked_password
from intake.service.admin.errors import AdminError, NotFoundError


@frozen
class Offer:
    """An invitation as pages show it: its workspace's name and who sent it."""

    invitation: Invitation
    workspace_name: str
    invited_by: str  # the inviter's address

    def expired(self, now: datetime) -> bool:
        return now >= self.invitation.expires_at


@frozen
class Sent:
    """The answer to an invitation or a resend: the same whoever the address is."""

    invitation: Invitation
    mailed: bool  # False: no mail server, or it refused; the invitation waits all the same
    mail_set_up: bool = True


@frozen
class LinkedInvitation:
    """An invitation opened by its mailed link; only the invited mailbox has it."""

    offer: Offer
    has_account: bool


class Invitations(AccountsBase):
    """Invitations to a workspace, accepted by their invitee only."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        id_source: IdSource,
        settings: AccountSettings,
        *,
        hasher: PasswordHasher,
        rate_limiter: RateLimiter,
        sessions: Sessions,
        mailer: Mailer | None = None,
    ) -> None:
        super().__init__(store, clock, id_source, settings)
        self._hasher = hasher
        self._limiter = rate_limiter
        self._sessions = sessions
        self._mailer = mailer

    async def invite(
        self, by: SignedIn, workspace_id: str, email: str, role: Role = Role.MEMBER
    ) -> Sent:
        """An owner invites an address (again: the invitation made anew, a new link)."""
        by.require_owner(workspace_id)
        try:
            address = normalise_email(email)
        except InvalidEmail as error:
            raise AdminError(str(error), field="email") from None
        return await self._send(workspace_id, address, role, by.user)

    async def owned(self, by: SignedIn, invitation_id: str) -> Invitation:
        """A pending invitation of a workspace `by` owns: NotFoundError for any other,
        NotAllowed for a member's."""
        return await self._owned(by, invitation_id)

    async def resend(self, by: SignedIn, invitation_id: str) -> Sent:
        """A pending invitation (expired or not) made anew: a new link, 7 more days."""
        found = await self._owned(by, invitation_id)
        return await self._send(found.workspace_id, found.email, found.role, by.user)

    async def revoke(self, by: SignedIn, invitation_id: str) -> None:
        """Closes a pending invitation: its link opens nothing from now on."""
        await self._owned(by, invitation_id)
        await self._store.users.close_invitation(invitation_id, InvitationStatus.REVOKED)

    async def of_workspace(self, by: SignedIn, workspace_id: str) -> list[Offer]:
        """An owner's view of the workspace's pending invitations, expired ones too."""
        by.require_owner(workspace_id)
        found = await self._store.users.workspace_invitations(workspace_id)
        return [await self._offer(invitation) for invitation in found]

    async def mine(self, signed: SignedIn) -> list[Offer]:
        """The invitations the signed-in user may accept now."""
        now = self._clock.now()
        found = await self._store.users.invitations_for(signed.user.email)
        return [await self._offer(i) for i in found if i.open(now)]

    async def accept(self, signed: SignedIn, invitation_id: str) -> None:
        """Makes the signed-in user a member; an invitation of another address, closed or
        expired is not found."""
        now = self._clock.now()
        if "\x00" in invitation_id or not await self._store.users.accept_invitation(
            invitation_id, signed.user.user_id, now
        ):
            raise NotFoundError("no such invitation")

    async def decline(self, signed: SignedIn, invitation_id: str) -> None:
        """Closes an invitation of the signed-in user's address, unaccepted."""
        found = await self._mine(signed, invitation_id)
        await self._store.users.close_invitation(found.invitation_id, InvitationStatus.DECLINED)

    async def by_link(self, token: str) -> LinkedInvitation:
        """The open invitation of a mailed link; LinkRefused for any other."""
        found = await self._by_link(token)
        has_account = await self._store.users.find_by_email(found.email) is not None
        return LinkedInvitation(await self._offer(found), has_account)

    async def join_by_link(self, token: str, password: str) -> SignedIn:
        """A new user for the invited address, with this password, member of the
        workspace, signed in. AccountExists when the address has a user: they sign in
        and accept; the link never sets an existing user's password."""
        checked = checked_password(password)
        found = await self._by_link(token)
        if await self._store.users.find_by_email(found.email) is not None:
            raise AccountExists
        now = self._clock.now()
        user = User(
            user_id=self._id("usr"),
            email=found.email,
            created_at=now,
            password_hash=await self._hasher.hash(checked),
        )
        if await self._store.users.join(found.invitation_id, user, now) is None:
            if await self._store.users.find_by_email(found.email) is not None:
                raise AccountExists  # made meanwhile
            raise LinkRefused
        return await self._sessions.start(user)

    async def _by_link(self, token: str) -> Invitation:
        found = None
        if len(token) <= 100:
            found = await self._store.users.find_invitation(ids.hash_secret(token))
        if found is None or not found.open(self._clock.now()):
            raise LinkRefused
        return found

    async def _owned(self, by: SignedIn, invitation_id: str) -> Invitation:
        found = None
        if "\x00" not in invitation_id:
            found = await self._store.users.get_invitation(invitation_id)
        if found is None or by.role_in(found.workspace_id) is None:
            raise NotFoundError("no such invitation")
        by.require_owner(found.workspace_id)
        if found.status is not InvitationStatus.PENDING:
            raise NotFoundError("no such invitation")
        return found

    async def _mine(self, signed: SignedIn, invitation_id: str) -> Invitation:
        found = None
        if "\x00" not in invitation_id:
            found = await self._store.users.get_invitation(invitation_id)
        if found is None or found.email != signed.user.email:
            raise NotFoundError("no such invitation")
        if found.status is not InvitationStatus.PENDING:
            raise NotFoundError("no such invitation")
        return found

    async def _offer(self, invitation: Invitation) -> Offer:
        workspace = await self._store.workspaces.get(invitation.workspace_id)
        inviter = await self._store.users.get(invitation.invited_by)
        return Offer(
            invitation,
            workspace.name if workspace is not None else invitation.workspace_id,
            inviter.email if inviter is not None else "",
        )

    async def _send(self, workspace_id: str, email: str, role: Role, inviter: User) -> Sent:
        """Stores the invitation under a new secret (the one of this workspace and
        address made anew), then mails its link when mail is set up. The link is never
        returned: only the invited mailbox receives it. TooManyInvitations past the
        workspace's hourly number, whoever the addresses are."""
        now = self._clock.now()
        window = Window(f"invite:w:{{{workspace_id}}}", self._settings.limits.invitations)
        decision = await self._limiter.hit((window,), now.timestamp())
        if not decision.allowed:
            raise TooManyInvitations(decision.retry_after)
        secret = self._secret()
        stored = await self._store.users.put_invitation(
            Invitation(
                invitation_id=self._id("inv"),
                workspace_id=workspace_id,
                email=email,
                role=role,
                invited_by=inviter.user_id,
                token_hash=ids.hash_secret(secret),
                created_at=now,
                expires_at=now + INVITATION_LIFETIME,
            )
        )
        if self._mailer is None:
            return Sent(stored, mailed=False, mail_set_up=False)
        link = self._settings.base_url.rstrip("/") + INVITATION_PATH + secret
        message = self._invitation_mail(await self._offer(stored), inviter.email, link)
        try:
            await self._mailer.send(message)
        except (MailUnavailable, MailRejected):
            return Sent(stored, mailed=False)  # it waits all the same; an owner resends
        return Sent(stored, mailed=True)

    def _invitation_mail(self, offer: Offer, inviter: str, link: str) -> EmailMessage:
        invitation = offer.invitation
        message = EmailMessage()
        message["From"] = self._settings.mail_from
        message["To"] = invitation.email
        message["Subject"] = f"{inviter} invited you to a workspace on intake"
        until = invitation.expires_at.strftime("%Y-%m-%d %H:%M UTC")
        message.set_content(
            f'{inviter} invited you to the workspace "{offer.workspace_name}" on intake,'
            f" as {invitation.role.value}.\n\n"
            f"To accept, open this link (it works until {until}):\n{link}\n\n"
            "If you have an account, sign in and accept it there; if not, the link lets you"
            " choose a password. If you did not expect it, ignore this mail: nothing"
            " changes until you accept.\n"
        )
        return message
