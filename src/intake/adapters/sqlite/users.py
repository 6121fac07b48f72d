"""UserRepository over SQLite: each method sends one function to the worker thread."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from intake.adapters import invitation_statements as isql
from intake.adapters import user_statements as sql
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.worker import Worker
from intake.domain.users import (
    Invitation,
    InvitationStatus,
    Membership,
    Role,
    Session,
    SignInToken,
    User,
)

ROWS = sql.UserRows(time=mapping.time_text, read_time=mapping.parse_time)
INVITATIONS = isql.InvitationRows(time=mapping.time_text, read_time=mapping.parse_time)


def _add(conn: sqlite3.Connection, user: User, membership: Membership) -> bool:
    with transaction(conn) as tx:
        if conn.execute(sql.INSERT_USER, ROWS.user_params(user)).rowcount == 0:
            tx.discard()
            return False
        conn.execute(sql.UPSERT_MEMBERSHIP, ROWS.membership_params(membership))
    return True


def _one_user(conn: sqlite3.Connection, statement: str, value: str) -> User | None:
    row = conn.execute(statement, (value,)).fetchone()
    return None if row is None else ROWS.user(row)


def _list(conn: sqlite3.Connection, workspace_id: str | None) -> list[User]:
    rows = (
        conn.execute(sql.LIST_USERS)
        if workspace_id is None
        else conn.execute(sql.LIST_MEMBERS, (workspace_id,))
    )
    return [ROWS.user(row) for row in rows]


def _changed(
    conn: sqlite3.Connection, statement: str, params: tuple[object, ...] | dict[str, object]
) -> int:
    return conn.execute(statement, params).rowcount


def _memberships(conn: sqlite3.Connection, statement: str, value: str) -> list[Membership]:
    return [ROWS.membership(row) for row in conn.execute(statement, (value,))]


def _use_token(conn: sqlite3.Connection, token_hash: bytes, now: datetime) -> SignInToken | None:
    params = {"token_hash": token_hash, "now": mapping.time_text(now)}
    row = conn.execute(sql.SPEND_LINK, params).fetchone()
    return None if row is None else ROWS.token(row)


def _find_token(conn: sqlite3.Connection, token_hash: bytes) -> SignInToken | None:
    row = conn.execute(sql.FIND_LINK, (token_hash,)).fetchone()
    return None if row is None else ROWS.token(row)


def _one_invitation(
    conn: sqlite3.Connection, statement: str, params: tuple[object, ...] | dict[str, object]
) -> Invitation | None:
    row = conn.execute(statement, params).fetchone()
    return None if row is None else INVITATIONS.invitation(row)


def _invitations(conn: sqlite3.Connection, statement: str, value: str) -> list[Invitation]:
    return [INVITATIONS.invitation(row) for row in conn.execute(statement, (value,))]


def _accept(
    conn: sqlite3.Connection, invitation_id: str, user_id: str, now: datetime
) -> Invitation | None:
    with transaction(conn):
        params = INVITATIONS.acceptance(invitation_id, user_id, now)
        rows = conn.execute(isql.ACCEPT_INVITATION, params).fetchall()
        if not rows:
            return None
        accepted = INVITATIONS.invitation(rows[0])
        conn.execute(isql.ADD_MEMBERSHIP, INVITATIONS.membership_of(accepted, user_id, now))
    return accepted


def _join(
    conn: sqlite3.Connection, invitation_id: str, user: User, now: datetime
) -> Invitation | None:
    with transaction(conn) as tx:
        params = {**INVITATIONS.acceptance(invitation_id, user.user_id, now), "email": user.email}
        rows = conn.execute(isql.ACCEPT_FOR_ADDRESS, params).fetchall()
        if not rows or conn.execute(sql.INSERT_USER, ROWS.user_params(user)).rowcount == 0:
            tx.discard()
            return None
        accepted = INVITATIONS.invitation(rows[0])
        conn.execute(isql.ADD_MEMBERSHIP, INVITATIONS.membership_of(accepted, user.user_id, now))
    return accepted


def _find_session(conn: sqlite3.Connection, token_hash: bytes) -> Session | None:
    row = conn.execute(sql.FIND_SESSION, (token_hash,)).fetchone()
    return None if row is None else ROWS.session(row)


class SqliteUsers:
    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def add(self, user: User, membership: Membership) -> bool:
        return await self._worker.run(_add, user, membership)

    async def get(self, user_id: str) -> User | None:
        return await self._worker.run(_one_user, sql.GET_USER, user_id)

    async def find_by_email(self, email: str) -> User | None:
        return await self._worker.run(_one_user, sql.FIND_USER, email)

    async def list_users(self, workspace_id: str | None = None) -> list[User]:
        return await self._worker.run(_list, workspace_id)

    async def remove(self, user_id: str) -> bool:
        params: dict[str, object] = {"user_id": user_id}
        return await self._worker.run(_changed, sql.DELETE_USER, params) > 0

    async def set_password(self, user_id: str, password_hash: str) -> None:
        await self._worker.run(_changed, sql.STORE_HASH, (password_hash, user_id))

    async def add_membership(self, membership: Membership) -> None:
        params = ROWS.membership_params(membership)
        await self._worker.run(_changed, sql.UPSERT_MEMBERSHIP, params)

    async def set_role(self, user_id: str, workspace_id: str, role: Role) -> bool:
        params: dict[str, object] = {
            "user_id": user_id,
            "workspace_id": workspace_id,
            "role": role.value,
        }
        return await self._worker.run(_changed, sql.SET_ROLE, params) > 0

    async def remove_membership(self, user_id: str, workspace_id: str) -> bool:
        params: dict[str, object] = {"user_id": user_id, "workspace_id": workspace_id}
        return await self._worker.run(_changed, sql.DELETE_MEMBERSHIP, params) > 0

    async def memberships(self, user_id: str) -> list[Membership]:
        return await self._worker.run(_memberships, sql.USER_MEMBERSHIPS, user_id)

    async def workspace_memberships(self, workspace_id: str) -> list[Membership]:
        return await self._worker.run(_memberships, sql.WORKSPACE_MEMBERSHIPS, workspace_id)

    async def add_token(self, token: SignInToken) -> None:
        await self._worker.run(_changed, sql.INSERT_LINK, ROWS.token_params(token))

    async def find_token(self, token_hash: bytes) -> SignInToken | None:
        return await self._worker.run(_find_token, bytes(token_hash))

    async def use_token(self, token_hash: bytes, now: datetime) -> SignInToken | None:
        return await self._worker.run(_use_token, bytes(token_hash), now)

    async def add_session(self, session: Session) -> None:
        await self._worker.run(_changed, sql.INSERT_SESSION, ROWS.session_params(session))

    async def find_session(self, token_hash: bytes) -> Session | None:
        return await self._worker.run(_find_session, bytes(token_hash))

    async def touch_session(self, session_id: str, when: datetime) -> None:
        params = (mapping.time_text(when), session_id)
        await self._worker.run(_changed, sql.TOUCH_SESSION, params)

    async def end_session(self, session_id: str) -> None:
        await self._worker.run(_changed, sql.DELETE_SESSION, (session_id,))

    async def end_sessions(self, user_id: str, keep: str | None = None) -> int:
        return await self._worker.run(_changed, sql.DELETE_SESSIONS, (user_id, keep or ""))

    async def put_invitation(self, invitation: Invitation) -> Invitation:
        return await self._worker.run(_put_invitation, INVITATIONS.params(invitation))

    async def get_invitation(self, invitation_id: str) -> Invitation | None:
        return await self._worker.run(_one_invitation, isql.GET_INVITATION, (invitation_id,))

    async def find_invitation(self, token_hash: bytes) -> Invitation | None:
        params = (bytes(token_hash),)
        return await self._worker.run(_one_invitation, isql.FIND_INVITATION, params)

    async def workspace_invitations(self, workspace_id: str) -> list[Invitation]:
        return await self._worker.run(_invitations, isql.WORKSPACE_INVITATIONS, workspace_id)

    async def invitations_for(self, email: str) -> list[Invitation]:
        return await self._worker.run(_invitations, isql.INVITATIONS_FOR, email)

    async def close_invitation(self, invitation_id: str, status: InvitationStatus) -> bool:
        params: dict[str, object] = {"invitation_id": invitation_id, "status": status.value}
        return await self._worker.run(_changed, isql.CLOSE_INVITATION, params) > 0

    async def accept_invitation(
        self, invitation_id: str, user_id: str, now: datetime
    ) -> Invitation | None:
        return await self._worker.run(_accept, invitation_id, user_id, now)

    async def join(self, invitation_id: str, user: User, now: datetime) -> Invitation | None:
        return await self._worker.run(_join, invitation_id, user, now)

    async def purge_invitations(self, expired_before: datetime) -> int:
        params = (mapping.time_text(expired_before),)
        return await self._worker.run(_changed, isql.PURGE_INVITATIONS, params)


def _put_invitation(conn: sqlite3.Connection, params: dict[str, object]) -> Invitation:
    with transaction(conn):
        (row,) = conn.execute(isql.PUT_INVITATION, params).fetchall()
    return INVITATIONS.invitation(row)
