"""The users repository (users, memberships, sign-in links, sessions, invitations), for
both SQL stores: the statements of user_statements.py and invitation_statements.py."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from intake.adapters import invitation_statements as isql
from intake.adapters import user_statements as sql
from intake.adapters.sql.executor import Executor, Params, Statements, Transaction
from intake.adapters.sql_rows import Row
from intake.domain.users import (
    Invitation,
    InvitationStatus,
    Membership,
    Role,
    Session,
    SignInToken,
    User,
)

# By user, then workspace: one user's rows in `memberships`' (USER_MEMBERSHIPS') order.
EVERY_MEMBERSHIP = "SELECT * FROM memberships ORDER BY user_id, workspace_id"
MEMBERS_MEMBERSHIPS = """
    SELECT * FROM memberships
    WHERE user_id IN (SELECT user_id FROM memberships WHERE workspace_id = ?)
    ORDER BY user_id, workspace_id
"""


class SqlUsers:
    def __init__(self, ex: Executor) -> None:
        self._ex = ex
        codec = ex.rows.codec
        self._rows = sql.UserRows(time=codec.time, read_time=codec.read_time)
        self._invitations = isql.InvitationRows(time=codec.time, read_time=codec.read_time)
        self._time = codec.time

    async def add(self, user: User, membership: Membership) -> bool:
        async def steps(tx: Transaction) -> bool:
            if not await self._insert(tx, user):
                tx.discard()
                return False
            await tx.execute(sql.UPSERT_MEMBERSHIP, self._rows.membership_params(membership))
            return True

        return await self._ex.transaction(steps)

    async def _insert(self, ex: Statements, user: User) -> bool:
        """False, nothing written: the address has a user."""
        return await ex.execute(sql.INSERT_USER, self._rows.user_params(user)) > 0

    async def get(self, user_id: str) -> User | None:
        return await self._user(sql.GET_USER, user_id)

    async def find_by_email(self, email: str) -> User | None:
        return await self._user(sql.FIND_USER, email)

    async def _user(self, statement: str, value: str) -> User | None:
        row = await self._ex.fetch_one(statement, (value,))
        return None if row is None else self._rows.user(row)

    async def list_users(self, workspace_id: str | None = None) -> list[User]:
        rows = await (
            self._ex.fetch_all(sql.LIST_USERS)
            if workspace_id is None
            else self._ex.fetch_all(sql.LIST_MEMBERS, (workspace_id,))
        )
        return [self._rows.user(row) for row in rows]

    async def remove(self, user_id: str) -> bool:
        params = {"user_id": user_id}

        async def steps(tx: Transaction) -> bool:
            if tx.locks_rows:  # its workspaces, in order: owners removed at once take turns
                await tx.execute(sql.LOCK_USERS_WORKSPACES, params)
            return await tx.execute(sql.DELETE_USER, params) > 0

        return await self._ex.transaction(steps)

    async def set_password(self, user_id: str, password_hash: str) -> None:
        await self._ex.execute(sql.STORE_HASH, (password_hash, user_id))

    async def add_membership(self, membership: Membership) -> None:
        await self._ex.execute(sql.UPSERT_MEMBERSHIP, self._rows.membership_params(membership))

    async def set_role(self, user_id: str, workspace_id: str, role: Role) -> bool:
        params = {"user_id": user_id, "workspace_id": workspace_id, "role": role.value}
        return await self._keeping_an_owner(sql.SET_ROLE, params)

    async def remove_membership(self, user_id: str, workspace_id: str) -> bool:
        params = {"user_id": user_id, "workspace_id": workspace_id}
        return await self._keeping_an_owner(sql.DELETE_MEMBERSHIP, params)

    async def _keeping_an_owner(self, statement: str, params: dict[str, str]) -> bool:
        return await self._ex.transaction(_keeping_an_owner, statement, params)

    async def memberships(self, user_id: str) -> list[Membership]:
        return self._memberships(await self._ex.fetch_all(sql.USER_MEMBERSHIPS, (user_id,)))

    async def workspace_memberships(self, workspace_id: str) -> list[Membership]:
        rows = await self._ex.fetch_all(sql.WORKSPACE_MEMBERSHIPS, (workspace_id,))
        return self._memberships(rows)

    async def memberships_of_members(self, workspace_id: str | None = None) -> list[Membership]:
        rows = await (
            self._ex.fetch_all(EVERY_MEMBERSHIP)
            if workspace_id is None
            else self._ex.fetch_all(MEMBERS_MEMBERSHIPS, (workspace_id,))
        )
        return self._memberships(rows)

    def _memberships(self, rows: Sequence[Row]) -> list[Membership]:
        return [self._rows.membership(row) for row in rows]

    async def add_token(self, token: SignInToken) -> None:
        await self._ex.execute(sql.INSERT_LINK, self._rows.token_params(token))

    async def find_token(self, token_hash: bytes) -> SignInToken | None:
        row = await self._ex.fetch_one(sql.FIND_LINK, (bytes(token_hash),))
        return None if row is None else self._rows.token(row)

    async def use_token(self, token_hash: bytes, now: datetime) -> SignInToken | None:
        params = {"token_hash": bytes(token_hash), "now": self._time(now)}
        row = await self._ex.fetch_one(sql.SPEND_LINK, params)
        return None if row is None else self._rows.token(row)

    async def add_session(self, session: Session) -> None:
        await self._ex.execute(sql.INSERT_SESSION, self._rows.session_params(session))

    async def find_session(self, token_hash: bytes) -> Session | None:
        row = await self._ex.fetch_one(sql.FIND_SESSION, (bytes(token_hash),))
        return None if row is None else self._rows.session(row)

    async def touch_session(self, session_id: str, when: datetime) -> None:
        await self._ex.execute(sql.TOUCH_SESSION, (self._time(when), session_id))

    async def end_session(self, session_id: str) -> None:
        await self._ex.execute(sql.DELETE_SESSION, (session_id,))

    async def end_sessions(self, user_id: str, keep: str | None = None) -> int:
        return await self._ex.execute(sql.DELETE_SESSIONS, (user_id, keep or ""))

    # Invitations

    async def put_invitation(self, invitation: Invitation) -> Invitation:
        params = self._invitations.params(invitation)

        async def steps(tx: Transaction) -> Row | None:
            return await tx.fetch_one(isql.PUT_INVITATION, params)

        row = await self._ex.transaction(steps)
        assert row is not None  # an insert or an update, RETURNING its row
        return self._invitations.invitation(row)

    async def get_invitation(self, invitation_id: str) -> Invitation | None:
        return await self._invitation(isql.GET_INVITATION, (invitation_id,))

    async def find_invitation(self, token_hash: bytes) -> Invitation | None:
        return await self._invitation(isql.FIND_INVITATION, (bytes(token_hash),))

    async def _invitation(self, statement: str, params: Params) -> Invitation | None:
        row = await self._ex.fetch_one(statement, params)
        return None if row is None else self._invitations.invitation(row)

    async def workspace_invitations(self, workspace_id: str) -> list[Invitation]:
        return await self._invitation_list(isql.WORKSPACE_INVITATIONS, workspace_id)

    async def invitations_for(self, email: str) -> list[Invitation]:
        return await self._invitation_list(isql.INVITATIONS_FOR, email)

    async def _invitation_list(self, statement: str, value: str) -> list[Invitation]:
        rows = await self._ex.fetch_all(statement, (value,))
        return [self._invitations.invitation(row) for row in rows]

    async def close_invitation(self, invitation_id: str, status: InvitationStatus) -> bool:
        params = {"invitation_id": invitation_id, "status": status.value}
        return await self._ex.execute(isql.CLOSE_INVITATION, params) > 0

    async def accept_invitation(
        self, invitation_id: str, user_id: str, now: datetime
    ) -> Invitation | None:
        params = self._invitations.acceptance(invitation_id, user_id, now)

        async def steps(tx: Transaction) -> Invitation | None:
            row = await tx.fetch_one(isql.ACCEPT_INVITATION, params)
            if row is None:
                return None
            accepted = self._invitations.invitation(row)
            membership = self._invitations.membership_of(accepted, user_id, now)
            await tx.execute(isql.ADD_MEMBERSHIP, membership)
            return accepted

        return await self._ex.transaction(steps)

    async def join(self, invitation_id: str, user: User, now: datetime) -> Invitation | None:
        params = {
            **self._invitations.acceptance(invitation_id, user.user_id, now),
            "email": user.email,
        }

        async def steps(tx: Transaction) -> Invitation | None:
            row = await tx.fetch_one(isql.ACCEPT_FOR_ADDRESS, params)
            if row is None or not await self._insert(tx, user):
                tx.discard()  # the address has a user: the acceptance is undone
                return None
            accepted = self._invitations.invitation(row)
            membership = self._invitations.membership_of(accepted, user.user_id, now)
            await tx.execute(isql.ADD_MEMBERSHIP, membership)
            return accepted

        return await self._ex.transaction(steps)

    async def purge_invitations(self, expired_before: datetime) -> int:
        return await self._ex.execute(isql.PURGE_INVITATIONS, (self._time(expired_before),))


async def _keeping_an_owner(tx: Transaction, statement: str, params: dict[str, str]) -> bool:
    if tx.locks_rows:  # the workspace's row: changes of its owners take turns
        await tx.execute(sql.LOCK_WORKSPACE, params)
    return await tx.execute(statement, params) > 0
