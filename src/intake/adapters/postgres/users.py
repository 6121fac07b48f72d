"""UserRepository over PostgreSQL: the statements SQLite sends too (user_statements.py)."""

from __future__ import annotations

from datetime import datetime

import psycopg

from intake.adapters import invitation_statements as isql
from intake.adapters import user_statements as sql
from intake.adapters.postgres import mapping
from intake.adapters.postgres.database import Database
from intake.adapters.sql_statements import for_psycopg
from intake.domain.users import (
    Invitation,
    InvitationStatus,
    Membership,
    Role,
    Session,
    SignInToken,
    User,
)

ROWS = sql.UserRows(time=mapping.moment, read_time=mapping.utc)
INVITATIONS = isql.InvitationRows(time=mapping.moment, read_time=mapping.utc)

_INSERT_USER = for_psycopg(sql.INSERT_USER)
_GET_USER = for_psycopg(sql.GET_USER)
_FIND_USER = for_psycopg(sql.FIND_USER)
_LIST_USERS = for_psycopg(sql.LIST_USERS)
_LIST_MEMBERS = for_psycopg(sql.LIST_MEMBERS)
_DELETE_USER = for_psycopg(sql.DELETE_USER)
_STORE_HASH = for_psycopg(sql.STORE_HASH)
_UPSERT_MEMBERSHIP = for_psycopg(sql.UPSERT_MEMBERSHIP)
_DELETE_MEMBERSHIP = for_psycopg(sql.DELETE_MEMBERSHIP)
_SET_ROLE = for_psycopg(sql.SET_ROLE)
_LOCK_WORKSPACE = for_psycopg(sql.LOCK_WORKSPACE)
_LOCK_USERS_WORKSPACES = for_psycopg(sql.LOCK_USERS_WORKSPACES)
_FIND_LINK = for_psycopg(sql.FIND_LINK)
_PUT_INVITATION = for_psycopg(isql.PUT_INVITATION)
_GET_INVITATION = for_psycopg(isql.GET_INVITATION)
_FIND_INVITATION = for_psycopg(isql.FIND_INVITATION)
_WORKSPACE_INVITATIONS = for_psycopg(isql.WORKSPACE_INVITATIONS)
_INVITATIONS_FOR = for_psycopg(isql.INVITATIONS_FOR)
_CLOSE_INVITATION = for_psycopg(isql.CLOSE_INVITATION)
_ACCEPT_INVITATION = for_psycopg(isql.ACCEPT_INVITATION)
_ACCEPT_FOR_ADDRESS = for_psycopg(isql.ACCEPT_FOR_ADDRESS)
_ADD_MEMBERSHIP = for_psycopg(isql.ADD_MEMBERSHIP)
_PURGE_INVITATIONS = for_psycopg(isql.PURGE_INVITATIONS)
_USER_MEMBERSHIPS = for_psycopg(sql.USER_MEMBERSHIPS)
_WORKSPACE_MEMBERSHIPS = for_psycopg(sql.WORKSPACE_MEMBERSHIPS)
_INSERT_LINK = for_psycopg(sql.INSERT_LINK)
_SPEND_LINK = for_psycopg(sql.SPEND_LINK)
_INSERT_SESSION = for_psycopg(sql.INSERT_SESSION)
_FIND_SESSION = for_psycopg(sql.FIND_SESSION)
_TOUCH_SESSION = for_psycopg(sql.TOUCH_SESSION)
_DELETE_SESSION = for_psycopg(sql.DELETE_SESSION)
_DELETE_SESSIONS = for_psycopg(sql.DELETE_SESSIONS)


class PostgresUsers:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, user: User, membership: Membership) -> bool:
        async with self._db.connection() as conn, conn.transaction():
            cursor = await conn.execute(_INSERT_USER, mapping.checked(ROWS.user_params(user)))
            if cursor.rowcount == 0:
                return False
            params = mapping.checked(ROWS.membership_params(membership))
            await conn.execute(_UPSERT_MEMBERSHIP, params)
        return True

    async def get(self, user_id: str) -> User | None:
        row = await self._db.fetch_one(_GET_USER, (user_id,))
        return None if row is None else ROWS.user(row)

    async def find_by_email(self, email: str) -> User | None:
        row = await self._db.fetch_one(_FIND_USER, (email,))
        return None if row is None else ROWS.user(row)

    async def list_users(self, workspace_id: str | None = None) -> list[User]:
        if workspace_id is None:
            rows = await self._db.fetch_all(_LIST_USERS)
        else:
            rows = await self._db.fetch_all(_LIST_MEMBERS, (workspace_id,))
        return [ROWS.user(row) for row in rows]

    async def remove(self, user_id: str) -> bool:
        # Its workspaces' rows locked, in order: owners removed at once take turns.
        async with self._db.connection() as conn, conn.transaction():
            await conn.execute(_LOCK_USERS_WORKSPACES, {"user_id": user_id})
            cursor = await conn.execute(_DELETE_USER, {"user_id": user_id})
            return cursor.rowcount > 0

    async def set_password(self, user_id: str, password_hash: str) -> None:
        await self._db.execute(_STORE_HASH, (password_hash, user_id))

    async def add_membership(self, membership: Membership) -> None:
        params = mapping.checked(ROWS.membership_params(membership))
        await self._db.execute(_UPSERT_MEMBERSHIP, params)

    async def set_role(self, user_id: str, workspace_id: str, role: Role) -> bool:
        params = {"user_id": user_id, "workspace_id": workspace_id, "role": role.value}
        return await self._keeping_an_owner(_SET_ROLE, params)

    async def remove_membership(self, user_id: str, workspace_id: str) -> bool:
        params = {"user_id": user_id, "workspace_id": workspace_id}
        return await self._keeping_an_owner(_DELETE_MEMBERSHIP, params)

    async def _keeping_an_owner(self, statement: str, params: dict[str, str]) -> bool:
        # The workspace's row lock makes concurrent changes of its owners take turns.
        async with self._db.connection() as conn, conn.transaction():
            await conn.execute(_LOCK_WORKSPACE, params)
            cursor = await conn.execute(statement, params)
            return cursor.rowcount > 0

    async def memberships(self, user_id: str) -> list[Membership]:
        rows = await self._db.fetch_all(_USER_MEMBERSHIPS, (user_id,))
        return [ROWS.membership(row) for row in rows]

    async def workspace_memberships(self, workspace_id: str) -> list[Membership]:
        rows = await self._db.fetch_all(_WORKSPACE_MEMBERSHIPS, (workspace_id,))
        return [ROWS.membership(row) for row in rows]

    async def add_token(self, token: SignInToken) -> None:
        await self._db.execute(_INSERT_LINK, ROWS.token_params(token))

    async def find_token(self, token_hash: bytes) -> SignInToken | None:
        row = await self._db.fetch_one(_FIND_LINK, (bytes(token_hash),))
        return None if row is None else ROWS.token(row)

    async def use_token(self, token_hash: bytes, now: datetime) -> SignInToken | None:
        params = {"token_hash": bytes(token_hash), "now": mapping.moment(now)}
        row = await self._db.fetch_one(_SPEND_LINK, params)
        return None if row is None else ROWS.token(row)

    async def add_session(self, session: Session) -> None:
        await self._db.execute(_INSERT_SESSION, ROWS.session_params(session))

    async def find_session(self, token_hash: bytes) -> Session | None:
        row = await self._db.fetch_one(_FIND_SESSION, (bytes(token_hash),))
        return None if row is None else ROWS.session(row)

    async def touch_session(self, session_id: str, when: datetime) -> None:
        await self._db.execute(_TOUCH_SESSION, (mapping.moment(when), session_id))

    async def end_session(self, session_id: str) -> None:
        await self._db.execute(_DELETE_SESSION, (session_id,))

    async def end_sessions(self, user_id: str, keep: str | None = None) -> int:
        return await self._db.execute(_DELETE_SESSIONS, (user_id, keep or ""))

    async def put_invitation(self, invitation: Invitation) -> Invitation:
        row = await self._db.fetch_one(
            _PUT_INVITATION, mapping.checked(INVITATIONS.params(invitation))
        )
        assert row is not None  # an insert or an update, RETURNING its row
        return INVITATIONS.invitation(row)

    async def get_invitation(self, invitation_id: str) -> Invitation | None:
        row = await self._db.fetch_one(_GET_INVITATION, (invitation_id,))
        return None if row is None else INVITATIONS.invitation(row)

    async def find_invitation(self, token_hash: bytes) -> Invitation | None:
        row = await self._db.fetch_one(_FIND_INVITATION, (bytes(token_hash),))
        return None if row is None else INVITATIONS.invitation(row)

    async def workspace_invitations(self, workspace_id: str) -> list[Invitation]:
        rows = await self._db.fetch_all(_WORKSPACE_INVITATIONS, (workspace_id,))
        return [INVITATIONS.invitation(row) for row in rows]

    async def invitations_for(self, email: str) -> list[Invitation]:
        rows = await self._db.fetch_all(_INVITATIONS_FOR, (email,))
        return [INVITATIONS.invitation(row) for row in rows]

    async def close_invitation(self, invitation_id: str, status: InvitationStatus) -> bool:
        params = {"invitation_id": invitation_id, "status": status.value}
        return await self._db.execute(_CLOSE_INVITATION, params) > 0

    async def accept_invitation(
        self, invitation_id: str, user_id: str, now: datetime
    ) -> Invitation | None:
        params = INVITATIONS.acceptance(invitation_id, user_id, now)
        async with self._db.connection() as conn, conn.transaction():
            row = await (await conn.execute(_ACCEPT_INVITATION, params)).fetchone()
            if row is None:
                return None
            accepted = INVITATIONS.invitation(row)
            membership = INVITATIONS.membership_of(accepted, user_id, now)
            await conn.execute(_ADD_MEMBERSHIP, membership)
        return accepted

    async def purge_invitations(self, expired_before: datetime) -> int:
        return await self._db.execute(_PURGE_INVITATIONS, (mapping.moment(expired_before),))

    async def join(self, invitation_id: str, user: User, now: datetime) -> Invitation | None:
        params = {**INVITATIONS.acceptance(invitation_id, user.user_id, now), "email": user.email}
        accepted: Invitation | None = None
        async with self._db.connection() as conn, conn.transaction():
            row = await (await conn.execute(_ACCEPT_FOR_ADDRESS, params)).fetchone()
            if row is None:
                return None
            added = await conn.execute(_INSERT_USER, mapping.checked(ROWS.user_params(user)))
            if added.rowcount == 0:  # the address has a user: the acceptance is undone
                raise psycopg.Rollback
            accepted = INVITATIONS.invitation(row)
            membership = INVITATIONS.membership_of(accepted, user.user_id, now)
            await conn.execute(_ADD_MEMBERSHIP, membership)
        return accepted
