"""`Accounts` (the dashboard's users and sign-in) as each use builds it: a serving process
from its runtime's parts, a management command from its own. Its password hasher is
argon2id, and a serving process mails invitations when INTAKE_SMTP_URL is set."""

from __future__ import annotations

from intake.adapters.password_argon2 import Argon2PasswordHasher
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.system import SecureIdSource
from intake.admin_runtime import AdminRuntime
from intake.config import Settings
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.passwords import PasswordHasher
from intake.ports.rate_limiter import RateLimiter
from intake.ports.senders import Mailer
from intake.ports.store import Store
from intake.service.accounts import Accounts, AccountSettings


def account_settings(settings: Settings) -> AccountSettings:
    return AccountSettings(base_url=settings.public_base_url, mail_from=settings.mail_from)


def make_accounts(
    settings: Settings,
    store: Store,
    clock: Clock,
    id_source: IdSource,
    rate_limiter: RateLimiter,
    *,
    mailer: Mailer | None = None,
    hasher: PasswordHasher | None = None,
) -> Accounts:
    return Accounts(
        store,
        clock,
        id_source,
        hasher=hasher or Argon2PasswordHasher(),
        rate_limiter=rate_limiter,
        settings=account_settings(settings),
        mailer=mailer,
    )


def serving_accounts(
    settings: Settings,
    store: Store,
    clock: Clock,
    id_source: IdSource,
    rate_limiter: RateLimiter,
    *,
    hasher: PasswordHasher | None = None,
) -> Accounts:
    """For a serving process: its rate limiter (Redis when shared), mail when set up."""
    # With the clients, which load HTTP clients that only a serving process (which has
    # them already) should pay for.
    from intake.client_resources import open_mailer  # noqa: PLC0415

    return make_accounts(
        settings,
        store,
        clock,
        id_source,
        rate_limiter,
        mailer=open_mailer(settings),
        hasher=hasher,
    )


def command_accounts(runtime: AdminRuntime) -> Accounts:
    """For `intake user ...`: links are printed, never mailed; no one signs in here."""
    return make_accounts(
        runtime.settings, runtime.store, runtime.clock, SecureIdSource(), InProcessRateLimiter()
    )
