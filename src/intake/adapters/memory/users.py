"""UserRepository in memory: its own tables, reached only while the store is open."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from attrs import evolve

from intake.adapters.memory.tables import Repository, Tables, utc
from intake.domain.users import (
    Invitation,
    InvitationStatus,
    Membership,
    Role,
    Session,
    SignInToken,
    User,
)


class InMemoryUsers(Repository):
    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)
        self._users: dict[str, User] = {}
        self._memberships: dict[tuple[str, str], Membership] = {}
        self._tokens: dict[bytes, SignInToken] = {}
        self._sessions: dict[bytes, Session] = {}
        self._invitations: dict[str, Invitation] = {}

    async def add(self, user: User, membership: Membership) -> bool:
        _ = self._t
        if any(u.email == user.email for u in self._users.values()):
            return False
        self._users[user.user_id] = evolve(user, created_at=utc(user.created_at))
        self._memberships[(membership.user_id, membership.workspace_id)] = membership
        return True

    async def get(self, user_id: str) -> User | None:
        _ = self._t
        return self._users.get(user_id)

    async def find_by_email(self, email: str) -> User | None:
        _ = self._t
        return next((u for u in self._users.values() if u.email == email), None)

    async def list_users(self, workspace_id: str | None = None) -> list[User]:
        _ = self._t
        users = list(self._users.values())
        if workspace_id is not None:
            members = {m.user_id for (_, w), m in self._memberships.items() if w == workspace_id}
            users = [u for u in users if u.user_id in members]
        return sorted(users, key=lambda u: (u.created_at, u.user_id))

    async def remove(self, user_id: str) -> bool:
        _ = self._t
        mine = [m for (u, _), m in self._memberships.items() if u == user_id]
        if user_id not in self._users or not all(self._another_owner(m) for m in mine):
            return False
        del self._users[user_id]
        for invitation_id in [
            i.invitation_id for i in self._invitations.values() if i.invited_by == user_id
        ]:
            del self._invitations[invitation_id]
        for key in [k for k in self._memberships if k[0] == user_id]:
            del self._memberships[key]
        for token_hash in [h for h, t in self._tokens.items() if t.user_id == user_id]:
            del self._tokens[token_hash]
        await self.end_sessions(user_id)
        return True

    async def set_password(self, user_id: str, password_hash: str) -> None:
        _ = self._t
        user = self._users.get(user_id)
        if user is not None:
            self._users[user_id] = evolve(user, password_hash=password_hash)

    async def add_membership(self, membership: Membership) -> None:
        _ = self._t
        key = (membership.user_id, membership.workspace_id)
        if membership.user_id in self._users:
            self._memberships[key] = membership

    async def set_role(self, user_id: str, workspace_id: str, role: Role) -> bool:
        _ = self._t
        found = self._memberships.get((user_id, workspace_id))
        if found is None or (role is not Role.OWNER and not self._another_owner(found)):
            return False
        self._memberships[(user_id, workspace_id)] = evolve(found, role=role)
        return True

    async def remove_membership(self, user_id: str, workspace_id: str) -> bool:
        _ = self._t
        found = self._memberships.get((user_id, workspace_id))
        if found is None or not self._another_owner(found):
            return False
        del self._memberships[(user_id, workspace_id)]
        return True

    def _another_owner(self, member: Membership) -> bool:
        """The member is no owner, or the workspace has another."""
        return member.role is not Role.OWNER or any(
            m.role is Role.OWNER and u != member.user_id
            for (u, w), m in self._memberships.items()
            if w == member.workspace_id
        )

    async def memberships(self, user_id: str) -> list[Membership]:
        _ = self._t
        found = [m for (u, _), m in self._memberships.items() if u == user_id]
        return sorted(found, key=lambda m: m.workspace_id)

    async def workspace_memberships(self, workspace_id: str) -> list[Membership]:
        _ = self._t
        found = [m for (_, w), m in self._memberships.items() if w == workspace_id]
        return sorted(found, key=lambda m: (m.created_at, m.user_id))

    async def add_token(self, token: SignInToken) -> None:
        _ = self._t
        self._tokens[token.token_hash] = token

    async def find_token(self, token_hash: bytes) -> SignInToken | None:
        _ = self._t
        return self._tokens.get(token_hash)

    async def use_token(self, token_hash: bytes, now: datetime) -> SignInToken | None:
        _ = self._t
        token = self._tokens.get(token_hash)
        if token is None or not token.usable(now) or token.user_id not in self._users:
            return None
        used = evolve(token, used_at=utc(now))
        self._tokens[token_hash] = used
        return used

    async def add_session(self, session: Session) -> None:
        _ = self._t
        self._sessions[session.token_hash] = session

    async def find_session(self, token_hash: bytes) -> Session | None:
        _ = self._t
        return self._sessions.get(token_hash)

    async def touch_session(self, session_id: str, when: datetime) -> None:
        _ = self._t
        for token_hash, session in self._sessions.items():
            if session.session_id == session_id:
                self._sessions[token_hash] = evolve(session, last_seen_at=utc(when))
                return

    async def end_session(self, session_id: str) -> None:
        _ = self._t
        for token_hash in [h for h, s in self._sessions.items() if s.session_id == session_id]:
            del self._sessions[token_hash]

    async def end_sessions(self, user_id: str, keep: str | None = None) -> int:
        _ = self._t
        ending = [
            h for h, s in self._sessions.items() if s.user_id == user_id and s.session_id != keep
        ]
        for token_hash in ending:
            del self._sessions[token_hash]
        return len(ending)

    async def put_invitation(self, invitation: Invitation) -> Invitation:
        _ = self._t
        stored = evolve(
            invitation,
            created_at=utc(invitation.created_at),
            expires_at=utc(invitation.expires_at),
        )
        earlier = self._same_address(invitation.workspace_id, invitation.email)
        if earlier is not None:
            del self._invitations[earlier.invitation_id]
            stored = evolve(stored, invitation_id=earlier.invitation_id)
        self._invitations[stored.invitation_id] = stored
        return stored

    def _same_address(self, workspace_id: str, email: str) -> Invitation | None:
        return next(
            (
                i
                for i in self._invitations.values()
                if i.workspace_id == workspace_id and i.email == email
            ),
            None,
        )

    async def get_invitation(self, invitation_id: str) -> Invitation | None:
        _ = self._t
        return self._invitations.get(invitation_id)

    async def find_invitation(self, token_hash: bytes) -> Invitation | None:
        _ = self._t
        return next((i for i in self._invitations.values() if i.token_hash == token_hash), None)

    async def workspace_invitations(self, workspace_id: str) -> list[Invitation]:
        _ = self._t
        return self._pending(lambda i: i.workspace_id == workspace_id)

    async def invitations_for(self, email: str) -> list[Invitation]:
        _ = self._t
        return self._pending(lambda i: i.email == email)

    def _pending(self, wanted: Callable[[Invitation], bool]) -> list[Invitation]:
        found = [
            i
            for i in self._invitations.values()
            if i.status is InvitationStatus.PENDING and wanted(i)
        ]
        return sorted(found, key=lambda i: (i.created_at, i.invitation_id))

    async def close_invitation(self, invitation_id: str, status: InvitationStatus) -> bool:
        _ = self._t
        found = self._invitations.get(invitation_id)
        if found is None or found.status is not InvitationStatus.PENDING:
            return False
        self._invitations[invitation_id] = evolve(found, status=status)
        return True

    async def accept_invitation(
        self, invitation_id: str, user_id: str, now: datetime
    ) -> Invitation | None:
        _ = self._t
        user = self._users.get(user_id)
        found = self._invitations.get(invitation_id)
        if user is None or found is None or not found.open(now) or found.email != user.email:
            return None
        return self._accepted(found, user_id, now)

    async def purge_invitations(self, expired_before: datetime) -> int:
        _ = self._t
        old = [i for i, found in self._invitations.items() if found.expires_at < expired_before]
        for invitation_id in old:
            del self._invitations[invitation_id]
        return len(old)

    async def join(self, invitation_id: str, user: User, now: datetime) -> Invitation | None:
        _ = self._t
        found = self._invitations.get(invitation_id)
        if found is None or not found.open(now) or found.email != user.email:
            return None
        if any(u.email == user.email for u in self._users.values()):
            return None
        self._users[user.user_id] = evolve(user, created_at=utc(user.created_at))
        return self._accepted(found, user.user_id, now)

    def _accepted(self, invitation: Invitation, user_id: str, now: datetime) -> Invitation:
        accepted = evolve(invitation, status=InvitationStatus.ACCEPTED)
        self._invitations[invitation.invitation_id] = accepted
        key = (user_id, invitation.workspace_id)
        if key not in self._memberships:
            self._memberships[key] = Membership(
                user_id, invitation.workspace_id, invitation.role, utc(now)
            )
        return accepted
