"""UserRepository in memory: its own tables, reached only while the store is open."""

from __future__ import annotations

from datetime import datetime

from attrs import evolve

from intake.adapters.memory.tables import Repository, Tables, utc
from intake.domain.users import Membership, Role, Session, SignInToken, User


class InMemoryUsers(Repository):
    def __init__(self, tables: Tables) -> None:
        super().__init__(tables)
        self._users: dict[str, User] = {}
        self._memberships: dict[tuple[str, str], Membership] = {}
        self._tokens: dict[bytes, SignInToken] = {}
        self._sessions: dict[bytes, Session] = {}

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
        if self._users.pop(user_id, None) is None:
            return False
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
