"""The users repository's statements, sent alike by SQLite and PostgreSQL (written in
sqlite3's placeholder styles, see sql_statements.py), and its rows to domain objects and
back, each store passing how it writes and reads a time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from attrs import frozen

from intake.adapters.sql_rows import Row
from intake.domain.users import Membership, Role, Session, SignInToken, User

INSERT_USER = """
    INSERT INTO users (user_id, email, password_hash, created_at)
    VALUES (:user_id, :email, :password_hash, :created_at)
    ON CONFLICT (email) DO NOTHING
"""
GET_USER = "SELECT * FROM users WHERE user_id = ?"
FIND_USER = "SELECT * FROM users WHERE email = ?"
LIST_USERS = "SELECT * FROM users ORDER BY created_at, user_id"
LIST_MEMBERS = """
    SELECT u.* FROM users u JOIN memberships m ON m.user_id = u.user_id
    WHERE m.workspace_id = ? ORDER BY u.created_at, u.user_id
"""
STORE_HASH = "UPDATE users SET password_hash = ? WHERE user_id = ?"
UPSERT_MEMBERSHIP = """
    INSERT INTO memberships (user_id, workspace_id, role, created_at)
    VALUES (:user_id, :workspace_id, :role, :created_at)
    ON CONFLICT (user_id, workspace_id) DO UPDATE SET role = excluded.role
"""


def _another_owner(workspace: str) -> str:
    """True when the workspace has an owner other than :user_id: the one rule that keeps
    an owner in every workspace, for a role change, a membership's removal and a user's."""
    return f"""EXISTS (
          SELECT 1 FROM memberships other
          WHERE other.workspace_id = {workspace} AND other.role = 'owner'
            AND other.user_id <> :user_id)"""  # noqa: S608 - constants only


# A role change or a removal that would leave the workspace without an owner touches
# nothing (0 rows): the check and the change are one statement, so two owners demoting
# each other at once cannot both pass it. PostgreSQL also locks the workspace's row
# first (READ COMMITTED would let both statements see the other owner still there).
SET_ROLE = f"""
    UPDATE memberships SET role = :role
    WHERE user_id = :user_id AND workspace_id = :workspace_id
      AND (:role = 'owner' OR role <> 'owner' OR {_another_owner(":workspace_id")})
"""  # noqa: S608 - constants only
DELETE_MEMBERSHIP = f"""
    DELETE FROM memberships
    WHERE user_id = :user_id AND workspace_id = :workspace_id
      AND (role <> 'owner' OR {_another_owner(":workspace_id")})
"""  # noqa: S608 - constants only
# Memberships, links, sessions and the invitations they sent go with it (ON DELETE
# CASCADE); none of it when they are the last owner of a workspace.
DELETE_USER = f"""
    DELETE FROM users
    WHERE user_id = :user_id AND NOT EXISTS (
        SELECT 1 FROM memberships mine
        WHERE mine.user_id = :user_id AND mine.role = 'owner'
          AND NOT {_another_owner("mine.workspace_id")})
"""  # noqa: S608 - constants only
LOCK_WORKSPACE = "SELECT 1 FROM workspaces WHERE workspace_id = :workspace_id FOR UPDATE"
LOCK_USERS_WORKSPACES = """
    SELECT 1 FROM workspaces
    WHERE workspace_id IN (SELECT workspace_id FROM memberships WHERE user_id = :user_id)
    ORDER BY workspace_id FOR UPDATE
"""
USER_MEMBERSHIPS = "SELECT * FROM memberships WHERE user_id = ? ORDER BY workspace_id"
WORKSPACE_MEMBERSHIPS = """
    SELECT * FROM memberships WHERE workspace_id = ? ORDER BY created_at, user_id
"""
INSERT_LINK = """
    INSERT INTO sign_in_tokens (token_hash, user_id, created_at, expires_at, used_at)
    VALUES (:token_hash, :user_id, :created_at, :expires_at, :used_at)
"""
FIND_LINK = "SELECT * FROM sign_in_tokens WHERE token_hash = ?"
# One statement: of two uses at once, only one finds `used_at` still NULL.
SPEND_LINK = """
    UPDATE sign_in_tokens SET used_at = :now
    WHERE token_hash = :token_hash AND used_at IS NULL AND expires_at > :now
    RETURNING *
"""
INSERT_SESSION = """
    INSERT INTO sessions (session_id, token_hash, user_id, created_at, last_seen_at, expires_at)
    VALUES (:session_id, :token_hash, :user_id, :created_at, :last_seen_at, :expires_at)
"""
FIND_SESSION = "SELECT * FROM sessions WHERE token_hash = ?"
TOUCH_SESSION = "UPDATE sessions SET last_seen_at = ? WHERE session_id = ?"
DELETE_SESSION = "DELETE FROM sessions WHERE session_id = ?"
DELETE_SESSIONS = "DELETE FROM sessions WHERE user_id = ? AND session_id <> ?"


@frozen
class UserRows:
    """How one store writes a time (`time`) and reads it back (`read_time`)."""

    time: Callable[[datetime], object]
    read_time: Callable[[Any], datetime]

    def _maybe_time(self, value: Any) -> datetime | None:
        return None if value is None else self.read_time(value)

    def user_params(self, user: User) -> dict[str, object]:
        return {
            "user_id": user.user_id,
            "email": user.email,
            "password_hash": user.password_hash,
            "created_at": self.time(user.created_at),
        }

    def user(self, row: Row) -> User:
        return User(
            user_id=row["user_id"],
            email=row["email"],
            created_at=self.read_time(row["created_at"]),
            password_hash=row["password_hash"],
        )

    def membership_params(self, membership: Membership) -> dict[str, object]:
        return {
            "user_id": membership.user_id,
            "workspace_id": membership.workspace_id,
            "role": membership.role.value,
            "created_at": self.time(membership.created_at),
        }

    def membership(self, row: Row) -> Membership:
        return Membership(
            user_id=row["user_id"],
            workspace_id=row["workspace_id"],
            role=Role(row["role"]),
            created_at=self.read_time(row["created_at"]),
        )

    def token_params(self, token: SignInToken) -> dict[str, object]:
        return {
            "token_hash": bytes(token.token_hash),
            "user_id": token.user_id,
            "created_at": self.time(token.created_at),
            "expires_at": self.time(token.expires_at),
            "used_at": None if token.used_at is None else self.time(token.used_at),
        }

    def token(self, row: Row) -> SignInToken:
        return SignInToken(
            token_hash=bytes(row["token_hash"]),
            user_id=row["user_id"],
            created_at=self.read_time(row["created_at"]),
            expires_at=self.read_time(row["expires_at"]),
            used_at=self._maybe_time(row["used_at"]),
        )

    def session_params(self, session: Session) -> dict[str, object]:
        return {
            "session_id": session.session_id,
            "token_hash": bytes(session.token_hash),
            "user_id": session.user_id,
            "created_at": self.time(session.created_at),
            "last_seen_at": self.time(session.last_seen_at),
            "expires_at": self.time(session.expires_at),
        }

    def session(self, row: Row) -> Session:
        return Session(
            session_id=row["session_id"],
            token_hash=bytes(row["token_hash"]),
            user_id=row["user_id"],
            created_at=self.read_time(row["created_at"]),
            last_seen_at=self.read_time(row["last_seen_at"]),
            expires_at=self.read_time(row["expires_at"]),
        )
