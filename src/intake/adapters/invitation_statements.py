"""The invitations' statements, sent alike by SQLite and PostgreSQL (in sqlite3's
placeholder styles, see sql_statements.py), and their rows to `Invitation` and back."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from attrs import frozen

from intake.adapters.sql_rows import Row
from intake.domain.users import Invitation, InvitationStatus, Role

# A second invitation of the same address to the same workspace, or a resend, makes the
# one row anew: a new secret, role, inviter and expiry, pending again, under its first id.
PUT_INVITATION = """
    INSERT INTO invitations (
        invitation_id, workspace_id, email, role, invited_by, token_hash,
        created_at, expires_at, status
    ) VALUES (
        :invitation_id, :workspace_id, :email, :role, :invited_by, :token_hash,
        :created_at, :expires_at, :status
    )
    ON CONFLICT (workspace_id, email) DO UPDATE SET
        role = excluded.role, invited_by = excluded.invited_by,
        token_hash = excluded.token_hash, created_at = excluded.created_at,
        expires_at = excluded.expires_at, status = excluded.status
    RETURNING *
"""
GET_INVITATION = "SELECT * FROM invitations WHERE invitation_id = ?"
FIND_INVITATION = "SELECT * FROM invitations WHERE token_hash = ?"
WORKSPACE_INVITATIONS = """
    SELECT * FROM invitations WHERE workspace_id = ? AND status = 'pending'
    ORDER BY created_at, invitation_id
"""
INVITATIONS_FOR = """
    SELECT * FROM invitations WHERE email = ? AND status = 'pending'
    ORDER BY created_at, invitation_id
"""
CLOSE_INVITATION = """
    UPDATE invitations SET status = :status
    WHERE invitation_id = :invitation_id AND status = 'pending'
"""
# Accepting is one statement that checks and closes, so that of two accepts at once
# one wins; the membership is added in the same transaction.
ACCEPT_INVITATION = """
    UPDATE invitations SET status = 'accepted'
    WHERE invitation_id = :invitation_id AND status = 'pending' AND expires_at > :now
      AND email = (SELECT email FROM users WHERE user_id = :user_id)
    RETURNING *
"""
ACCEPT_FOR_ADDRESS = """
    UPDATE invitations SET status = 'accepted'
    WHERE invitation_id = :invitation_id AND status = 'pending' AND expires_at > :now
      AND email = :email
    RETURNING *
"""
PURGE_INVITATIONS = "DELETE FROM invitations WHERE expires_at < ?"
# A member already keeps their role: an invitation never changes one (owners do, on
# Members).
ADD_MEMBERSHIP = """
    INSERT INTO memberships (user_id, workspace_id, role, created_at)
    VALUES (:user_id, :workspace_id, :role, :created_at)
    ON CONFLICT (user_id, workspace_id) DO NOTHING
"""


@frozen
class InvitationRows:
    """How one store writes a time (`time`) and reads it back (`read_time`)."""

    time: Callable[[datetime], object]
    read_time: Callable[[Any], datetime]

    def params(self, invitation: Invitation) -> dict[str, object]:
        return {
            "invitation_id": invitation.invitation_id,
            "workspace_id": invitation.workspace_id,
            "email": invitation.email,
            "role": invitation.role.value,
            "invited_by": invitation.invited_by,
            "token_hash": bytes(invitation.token_hash),
            "created_at": self.time(invitation.created_at),
            "expires_at": self.time(invitation.expires_at),
            "status": invitation.status.value,
        }

    def invitation(self, row: Row) -> Invitation:
        return Invitation(
            invitation_id=row["invitation_id"],
            workspace_id=row["workspace_id"],
            email=row["email"],
            role=Role(row["role"]),
            invited_by=row["invited_by"],
            token_hash=bytes(row["token_hash"]),
            created_at=self.read_time(row["created_at"]),
            expires_at=self.read_time(row["expires_at"]),
            status=InvitationStatus(row["status"]),
        )

    def acceptance(self, invitation_id: str, user_id: str, now: datetime) -> dict[str, object]:
        return {"invitation_id": invitation_id, "user_id": user_id, "now": self.time(now)}

    def membership_of(
        self, invitation: Invitation, user_id: str, now: datetime
    ) -> dict[str, object]:
        return {
            "user_id": user_id,
            "workspace_id": invitation.workspace_id,
            "role": invitation.role.value,
            "created_at": self.time(now),
        }
