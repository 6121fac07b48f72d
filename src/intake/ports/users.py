from __future__ import annotations

from datetime import datetime
from typing import Protocol

from intake.domain.users import (
    Invitation,
    InvitationStatus,
    Membership,
    Role,
    Session,
    SignInToken,
    User,
)


class UserRepository(Protocol):
    """Users, their memberships, invitations, sign-in links and sessions."""

    async def add(self, user: User, membership: Membership) -> bool:
        """Adds the user with its first membership; False (nothing added) when a user
        with that email address exists."""
        ...

    async def get(self, user_id: str) -> User | None: ...

    async def find_by_email(self, email: str) -> User | None: ...

    async def list_users(self, workspace_id: str | None = None) -> list[User]:
        """Every user, or the members of one workspace, oldest first."""
        ...

    async def remove(self, user_id: str) -> bool:
        """Deletes the user with its memberships, links, sessions and the invitations it
        sent; False (nothing deleted) if unknown, or the last owner of a workspace."""
        ...

    async def set_password(self, user_id: str, password_hash: str) -> None: ...

    async def add_membership(self, membership: Membership) -> None:
        """Adds or replaces the user's role in that workspace."""
        ...

    async def set_role(self, user_id: str, workspace_id: str, role: Role) -> bool:
        """Changes a member's role; False (nothing changed) when they are no member or
        the change would leave the workspace without an owner."""
        ...

    async def remove_membership(self, user_id: str, workspace_id: str) -> bool:
        """False (nothing removed) when they are no member or the last owner."""
        ...

    async def memberships(self, user_id: str) -> list[Membership]: ...

    async def workspace_memberships(self, workspace_id: str) -> list[Membership]: ...

    async def memberships_of_members(self, workspace_id: str | None = None) -> list[Membership]:
        """Every user's memberships, or every membership of the members of one workspace
        (theirs elsewhere too), in one read: by user, each user's by workspace, as
        `memberships` orders them."""
        ...

    async def add_token(self, token: SignInToken) -> None: ...

    async def find_token(self, token_hash: bytes) -> SignInToken | None:
        """The link, used or not, without using it."""
        ...

    async def use_token(self, token_hash: bytes, now: datetime) -> SignInToken | None:
        """Marks the link used and returns it, if it exists, was never used and has not
        expired at `now`; else None. Two uses at once: one wins."""
        ...

    async def add_session(self, session: Session) -> None: ...

    async def find_session(self, token_hash: bytes) -> Session | None: ...

    async def touch_session(self, session_id: str, when: datetime) -> None: ...

    async def end_session(self, session_id: str) -> None: ...

    async def end_sessions(self, user_id: str, keep: str | None = None) -> int:
        """Ends every session of the user but `keep`'s; returns how many ended."""
        ...

    async def put_invitation(self, invitation: Invitation) -> Invitation:
        """Adds the invitation, or makes anew the one of the same workspace and address
        (its secret, role, inviter, times and status; its id stays): the stored one."""
        ...

    async def get_invitation(self, invitation_id: str) -> Invitation | None: ...

    async def find_invitation(self, token_hash: bytes) -> Invitation | None: ...

    async def workspace_invitations(self, workspace_id: str) -> list[Invitation]:
        """The workspace's pending invitations (expired ones too), oldest first."""
        ...

    async def invitations_for(self, email: str) -> list[Invitation]:
        """The address's pending invitations (expired ones too), oldest first."""
        ...

    async def close_invitation(self, invitation_id: str, status: InvitationStatus) -> bool:
        """A pending invitation declined or revoked; False when it is not pending."""
        ...

    async def accept_invitation(
        self, invitation_id: str, user_id: str, now: datetime
    ) -> Invitation | None:
        """If the invitation is open at `now` and for the user's address: marks it
        accepted and makes the user a member with its role (a member keeps their role),
        in one transaction; else None, nothing changed."""
        ...

    async def purge_invitations(self, expired_before: datetime) -> int:
        """Deletes the invitations that expired before then, whatever their status; how
        many."""
        ...

    async def join(self, invitation_id: str, user: User, now: datetime) -> Invitation | None:
        """A new user (`user`, with their password) accepting an open invitation for their
        address, in one transaction; None, nothing changed, when it is not open or the
        address has a user already."""
        ...
