"""The JSON shape of a workspace user, whoever prints it. Never the password hash."""

from __future__ import annotations

from intake.domain.users import Membership, User


def membership_view(membership: Membership) -> dict[str, object]:
    return {"workspace_id": membership.workspace_id, "role": membership.role.value}


def user_view(user: User, memberships: tuple[Membership, ...] = ()) -> dict[str, object]:
    return {
        "user_id": user.user_id,
        "email": user.email,
        "created_at": user.created_at.isoformat(),
        "password_set": user.password_hash is not None,
        "memberships": [membership_view(m) for m in memberships],
    }
