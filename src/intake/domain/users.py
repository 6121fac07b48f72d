"""Workspace users, their memberships, one-time sign-in links and dashboard sessions
(management-api.md, "Workspace users and the dashboard")."""

from __future__ import annotations

import enum
import hmac
from datetime import datetime, timedelta

from attrs import field, frozen

from intake.domain import ids
from intake.domain.validation import is_email

SIGN_IN_LINK_LIFETIME = timedelta(hours=24)
# An invitation is accepted within 7 days, or made again by an owner (Resend).
INVITATION_LIFETIME = timedelta(days=7)
# `intake purge` deletes an invitation this long after it expired, whatever became of it.
INVITATION_KEPT_AFTER_EXPIRY = timedelta(days=30)
# A session ends 14 days after sign-in, or after 2 days without use, whichever is first.
SESSION_LIFETIME = timedelta(days=14)
SESSION_IDLE_LIMIT = timedelta(days=2)
# Last use is written at most this often: a page view is not a write each time.
SESSION_TOUCH_INTERVAL = timedelta(minutes=5)
TOKEN_RANDOM_BYTES = 24  # 192 bits, like API keys: one SHA-256 is enough to store them
MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 1024  # a bound on the work a sign-in attempt can ask for
MAX_EMAIL_LENGTH = 254


class Role(enum.StrEnum):
    """Members read everything and triage submissions; owners also change forms,
    destinations, members and API keys."""

    OWNER = "owner"
    MEMBER = "member"

    @property
    def configures(self) -> bool:
        return self is Role.OWNER


@frozen
class User:
    user_id: str
    email: str  # normalised: normalise_email
    created_at: datetime
    # argon2id, in its PHC string form; None until the user sets one through a link.
    password_hash: str | None = field(default=None, repr=False)


@frozen
class Membership:
    user_id: str
    workspace_id: str
    role: Role
    created_at: datetime


@frozen
class SignInToken:
    """A one-time link's secret, kept as its hash only; used once, within 24 hours."""

    token_hash: bytes = field(repr=False)
    user_id: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None

    def usable(self, now: datetime) -> bool:
        return self.used_at is None and now < self.expires_at


class InvitationStatus(enum.StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    REVOKED = "revoked"


@frozen
class Invitation:
    """An owner's offer of a role in their workspace to an address. It becomes a
    membership only when the user of that address accepts it, signed in; its link's
    secret (mailed to the address, never shown to the inviter) is kept as its hash."""

    invitation_id: str
    workspace_id: str
    email: str  # normalised: normalise_email
    role: Role
    invited_by: str  # the inviting user's id
    token_hash: bytes = field(repr=False)
    created_at: datetime
    expires_at: datetime
    status: InvitationStatus = InvitationStatus.PENDING

    def open(self, now: datetime) -> bool:
        return self.status is InvitationStatus.PENDING and now < self.expires_at


@frozen
class Session:
    """A signed-in browser, server-side: its cookie holds the secret, the store its hash,
    so that a copy of the database signs no one in. Deleting the row ends it."""

    session_id: str
    token_hash: bytes = field(repr=False)
    user_id: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime

    def live(self, now: datetime) -> bool:
        return now < self.expires_at and now < self.last_seen_at + SESSION_IDLE_LIMIT

    def due_for_touch(self, now: datetime) -> bool:
        return now >= self.last_seen_at + SESSION_TOUCH_INTERVAL


class InvalidEmail(ValueError):  # noqa: N818 - a refusal, as its name says
    """Not an address intake will keep for a user."""


def normalise_email(raw: str) -> str:
    """Lower case and trimmed, so one person is one user however they type it; a valid
    address (the same check as the `email` rule), its delivery proved by the link."""
    email = raw.strip().lower()
    if len(email) > MAX_EMAIL_LENGTH or not is_email(email):
        raise InvalidEmail("not an email address")
    return email


def sign_in_token(random: bytes) -> str:
    if len(random) != TOKEN_RANDOM_BYTES:
        raise ValueError("sign-in tokens take 24 random bytes")
    return ids.encode_base32(int.from_bytes(random, "big"), 39)


def csrf_token(session_secret: str) -> str:
    """The session's CSRF token: derived from the cookie's secret, which a page of another
    site cannot read, so it needs no storage and dies with the session."""
    digest = hmac.new(session_secret.encode("utf-8"), b"intake csrf", "sha256").digest()
    return ids.encode_base32(int.from_bytes(digest, "big"), 52)


def same_token(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
