"""What every account service shares: the store, clock, ids and settings, and the one-time
link that sets a password; and the signed-in user as the dashboard sees it."""

from __future__ import annotations

from datetime import datetime

from attrs import field, frozen

from intake.domain import ids
from intake.domain.ratelimit import RateRule
from intake.domain.users import (
    SIGN_IN_LINK_LIFETIME,
    TOKEN_RANDOM_BYTES,
    Membership,
    Role,
    Session,
    SignInToken,
    User,
    sign_in_token,
)
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.store import Store
from intake.service.accounts.errors import NotAllowed
from intake.service.admin.errors import NotFoundError

SIGN_IN_PATH = "/dashboard/sign-in/"
INVITATION_PATH = "/dashboard/invitations/"


# 10 attempts per client network in 15 minutes; 20 per address typed in an hour.
PER_CLIENT = RateRule(10, 15 * 60)
PER_ACCOUNT = RateRule(20, 60 * 60)
# Invitations (and resends) a workspace sends in an hour: each may be a mail to anyone.
PER_WORKSPACE_INVITATIONS = RateRule(20, 60 * 60)


@frozen
class SignInLimits:
    """Sign-in attempts admitted, each window of its own: per client address (network)
    and per account (the address typed, known or not); and invitations per workspace."""

    per_client: RateRule = PER_CLIENT
    per_account: RateRule = PER_ACCOUNT
    invitations: RateRule = PER_WORKSPACE_INVITATIONS


@frozen
class AccountSettings:
    base_url: str  # the public address: links are base_url + /dashboard/sign-in/{token}
    mail_from: str
    limits: SignInLimits = field(factory=SignInLimits)


@frozen
class SignedIn:
    """A user with a live session. `secret` is the cookie's value: only the service and
    the browser know it. `csrf` goes into every form the dashboard serves."""

    user: User
    session: Session
    secret: str = field(repr=False)
    csrf: str = field(repr=False)
    memberships: tuple[Membership, ...]

    def role_in(self, workspace_id: str) -> Role | None:
        return next((m.role for m in self.memberships if m.workspace_id == workspace_id), None)

    def configures(self, workspace_id: str) -> bool:
        role = self.role_in(workspace_id)
        return role is not None and role.configures

    def require_owner(self, workspace_id: str) -> str:
        """`workspace_id`, when this user may change its settings: NotFoundError for a
        workspace that is not theirs, NotAllowed for a member's."""
        role = self.role_in(workspace_id)
        if role is None:
            raise NotFoundError("no such workspace")
        if not role.configures:
            raise NotAllowed("owners only")
        return workspace_id


@frozen
class NewUser:
    user: User
    membership: Membership
    # The one-time link, for the operator's terminal; None once a password is set.
    link: str | None = field(repr=False)


class AccountsBase:
    """The dependencies every account service takes first."""

    def __init__(
        self, store: Store, clock: Clock, id_source: IdSource, settings: AccountSettings
    ) -> None:
        self._store = store
        self._clock = clock
        self._ids = id_source
        self._settings = settings

    def _id(self, prefix: str) -> str:
        return ids.prefixed_id(prefix, self._ids.random_bytes(ids.ID_RANDOM_BYTES))

    def _secret(self) -> str:
        return sign_in_token(self._ids.random_bytes(TOKEN_RANDOM_BYTES))

    async def _new_link(self, user_id: str, now: datetime) -> str:
        secret = self._secret()
        await self._store.users.add_token(
            SignInToken(
                token_hash=ids.hash_secret(secret),
                user_id=user_id,
                created_at=now,
                expires_at=now + SIGN_IN_LINK_LIFETIME,
            )
        )
        return self._settings.base_url.rstrip("/") + SIGN_IN_PATH + secret
