"""Signing in to the dashboard: with email and password (rate limited, one answer for
every failure), with a one-time link that sets the password, and the sessions that
follow: found by the cookie's secret, ended by sign-out, by a password change and by
removal."""

from __future__ import annotations

from attrs import evolve

from intake.domain import ids
from intake.domain.ratelimit import Window
from intake.domain.users import (
    MAX_PASSWORD_LENGTH,
    MIN_PASSWORD_LENGTH,
    SESSION_LIFETIME,
    InvalidEmail,
    Session,
    User,
    csrf_token,
    normalise_email,
)
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.passwords import PasswordHasher
from intake.ports.rate_limiter import RateLimiter
from intake.ports.store import Store
from intake.service.accounts.base import AccountsBase, AccountSettings, SignedIn
from intake.service.accounts.errors import LinkRefused, SignInRefused, SignInThrottled
from intake.service.admin.errors import AdminError

# Verified when the address is unknown or has no password yet, so that every failed
# sign-in costs the same time: made once per process, of a password no one knows.
_DUMMY_PASSWORD = "intake: no account has this password"  # noqa: S105 - a decoy, not a secret


class Sessions(AccountsBase):
    """Signing in, and the sessions that follow."""

    _dummy_hash: str | None = None

    def __init__(
        self,
        store: Store,
        clock: Clock,
        id_source: IdSource,
        settings: AccountSettings,
        *,
        hasher: PasswordHasher,
        rate_limiter: RateLimiter,
    ) -> None:
        super().__init__(store, clock, id_source, settings)
        self._hasher = hasher
        self._limiter = rate_limiter

    async def sign_in(self, email: str, password: str, client: str) -> SignedIn:
        """A new session for the right address and password. `client` is the client's
        network (domain/client_network.py), for its own rate limit. Raises SignInRefused
        for any wrong input, SignInThrottled past a limit."""
        address = email.strip().lower()
        await self._throttle(address, client)
        try:
            address = normalise_email(email)
        except InvalidEmail:
            address = ""
        user = await self._store.users.find_by_email(address) if address else None
        password = password[:MAX_PASSWORD_LENGTH]
        if user is None or user.password_hash is None:
            await self._hasher.verify(await self._decoy(), password)
            raise SignInRefused
        if not await self._hasher.verify(user.password_hash, password):
            raise SignInRefused
        return await self.start(user)

    async def link_user(self, token: str) -> User:
        """The user whose password a link sets, without using it: LinkRefused for a link
        used, expired or unknown."""
        found = None
        if len(token) <= 100:
            found = await self._store.users.find_token(ids.hash_secret(token))
        user = None
        if found is not None and found.usable(self._clock.now()):
            user = await self._store.users.get(found.user_id)
        if user is None:
            raise LinkRefused
        return user

    async def use_link(self, token: str, password: str) -> SignedIn:
        """Sets the password of the link's user and signs them in; their other sessions
        end. The password is checked before the link is spent, so a refused password
        leaves the link usable."""
        checked = checked_password(password)
        used = await self._store.users.use_token(ids.hash_secret(token), self._clock.now())
        user = None if used is None else await self._store.users.get(used.user_id)
        if user is None:
            raise LinkRefused
        return await self._set_password(user, checked)

    async def change_password(self, signed_in: SignedIn, current: str, new: str) -> SignedIn:
        """Ends every other session of the user; this one goes on under a new secret."""
        checked = checked_password(new, field="new_password")
        user = await self._store.users.get(signed_in.user.user_id)
        if user is None or user.password_hash is None:
            raise SignInRefused
        if not await self._hasher.verify(user.password_hash, current[:MAX_PASSWORD_LENGTH]):
            raise AdminError("not your current password", field="current_password")
        return await self._set_password(user, checked)

    async def session(self, secret: str) -> SignedIn | None:
        """The signed-in user for a cookie's secret; None for an unknown, ended or
        expired session (an expired one is deleted)."""
        found = await self._store.users.find_session(ids.hash_secret(secret))
        if found is None:
            return None
        now = self._clock.now()
        if not found.live(now):
            await self._store.users.end_session(found.session_id)
            return None
        user = await self._store.users.get(found.user_id)
        if user is None:
            return None
        if found.due_for_touch(now):
            await self._store.users.touch_session(found.session_id, now)
            found = evolve(found, last_seen_at=now)
        return await self._signed_in(user, found, secret)

    async def sign_out(self, signed_in: SignedIn) -> None:
        """Ends this session."""
        await self._store.users.end_session(signed_in.session.session_id)

    async def _set_password(self, user: User, password: str) -> SignedIn:
        await self._store.users.set_password(user.user_id, await self._hasher.hash(password))
        await self._store.users.end_sessions(user.user_id)
        return await self.start(user)

    async def start(self, user: User) -> SignedIn:
        """A new session of `user`, who proved who they are (a password, a link)."""
        # Always a new secret: a session id planted before sign-in is never promoted.
        secret = self._secret()
        now = self._clock.now()
        session = Session(
            session_id=self._id("ses"),
            token_hash=ids.hash_secret(secret),
            user_id=user.user_id,
            created_at=now,
            last_seen_at=now,
            expires_at=now + SESSION_LIFETIME,
        )
        await self._store.users.add_session(session)
        return await self._signed_in(user, session, secret)

    async def _signed_in(self, user: User, session: Session, secret: str) -> SignedIn:
        memberships = tuple(await self._store.users.memberships(user.user_id))
        return SignedIn(user, session, secret, csrf_token(secret), memberships)

    async def _throttle(self, address: str, client: str) -> None:
        limits = self._settings.limits
        # Each in windows of its own: a client's attempts at many addresses are counted
        # against the client; many clients' attempts at one address against the address.
        # The address is counted by its hash: the limiter's keys hold no address.
        windows = (
            Window(f"signin:c:{{{client}}}", limits.per_client),
            Window(f"signin:a:{{{ids.hash_secret(address).hex()}}}", limits.per_account),
        )
        decision = await self._limiter.hit(windows, self._clock.now().timestamp())
        if not decision.allowed:
            raise SignInThrottled(decision.retry_after)

    async def _decoy(self) -> str:
        if self._dummy_hash is None:
            self._dummy_hash = await self._hasher.hash(_DUMMY_PASSWORD)
        return self._dummy_hash


def checked_password(password: str, field: str = "password") -> str:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AdminError(f"at least {MIN_PASSWORD_LENGTH} characters", field=field)
    if len(password) > MAX_PASSWORD_LENGTH:
        raise AdminError(f"at most {MAX_PASSWORD_LENGTH} characters", field=field)
    return password
