"""Configuration from `INTAKE_*` environment variables, one table for every command.

docs/configuration.md lists every name; keep the two in step.
"""

from __future__ import annotations

import ipaddress
import math
import os
from collections.abc import Mapping

from attrs import Factory, field, frozen

from intake.adapters.challenge_http import DEFAULT_VERIFY_URLS
from intake.adapters.sqlite.connection import MEMORY as SQLITE_MEMORY
from intake.adapters.sqlite.connection import database_path
from intake.domain.limits import PayloadLimits
from intake.domain.model import ChallengeProvider, Plan
from intake.domain.quota import (
    DEFAULT_PLANS,
    DEFAULT_SPAM_RETENTION_DAYS,
    DEFAULT_STORAGE_LIMIT,
    PlanTerms,
)
from intake.domain.ratelimit import RateLimits, RateRule
from intake.domain.signing import DEFAULT_LINK_TTL, MIN_SECRET_BYTES

DEFAULT_DATABASE_URL = "sqlite:///.intake/intake.db"
DEFAULT_DOWNLOAD_TTL = DEFAULT_LINK_TTL.total_seconds()
# Ten years: far enough for any use, and well inside what a date can hold.
MAX_DOWNLOAD_TTL = 10 * 366 * 86400.0
DEFAULT_UPLOAD_TIMEOUT = 300.0
DEFAULT_UPLOAD_GRACE = 3600.0

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the variable."""


@frozen
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    database_pool_size: int = 10
    database_pool_timeout: float = 2.0
    redis_url: str | None = None
    base_url: str | None = None
    trusted_proxies: tuple[Network, ...] = ()
    smtp_url: str | None = None
    mail_from: str = "intake@localhost"
    verify_urls: Mapping[ChallengeProvider, str] = field(factory=lambda: dict(DEFAULT_VERIFY_URLS))
    challenge_timeout: float = 3.0
    rate_limits: RateLimits = field(factory=RateLimits)
    limits: PayloadLimits = field(factory=PayloadLimits)
    plans: Mapping[Plan, PlanTerms] = field(factory=lambda: dict(DEFAULT_PLANS))
    body_timeout: float = 30.0
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    log_level: str = "info"
    webhook_allow_private: bool = False
    # `intake purge` deletes outbox rows published longer ago than this; 0: at once.
    outbox_retention_days: int = 7
    # `intake purge` erases spam and unverified submissions older than this; 0: never.
    spam_retention_days: int = DEFAULT_SPAM_RETENTION_DAYS
    # The most bytes of files a workspace keeps, counted for every status.
    workspace_storage_limit: int = DEFAULT_STORAGE_LIMIT
    # GET /metrics is served only when set, to `Authorization: Bearer <token>`.
    metrics_token: str | None = field(default=None, repr=False)
    # Where file uploads are stored (`file:///path`, a path, `s3://bucket/prefix?...`).
    blob_url: str | None = field(
        default=Factory(lambda self: default_blob_url(self.database_url), takes_self=True)
    )
    # Signs download links; unset, a secret made once is kept in the database.
    download_secret: str | None = field(default=None, repr=False)
    download_ttl: float = DEFAULT_DOWNLOAD_TTL  # seconds a download link works
    # Seconds a multipart body may take to arrive when its form accepts files.
    upload_timeout: float = DEFAULT_UPLOAD_TIMEOUT
    # `intake purge` deletes blobs linked to no submission once older than this.
    upload_grace: float = DEFAULT_UPLOAD_GRACE

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        reader = _Reader(env)
        defaults_limits = PayloadLimits()
        defaults_rates = RateLimits()
        plans = {
            plan: PlanTerms(
                monthly_limit=reader.integer(
                    f"INTAKE_PLAN_{plan.name}_LIMIT", terms.monthly_limit, minimum=0
                ),
                overage=terms.overage,
            )
            for plan, terms in DEFAULT_PLANS.items()
        }
        database_url = reader.text("INTAKE_DATABASE_URL", DEFAULT_DATABASE_URL)
        upload_timeout = reader.number("INTAKE_UPLOAD_TIMEOUT", DEFAULT_UPLOAD_TIMEOUT)
        upload_grace = reader.number("INTAKE_UPLOAD_GRACE", DEFAULT_UPLOAD_GRACE)
        if upload_grace <= upload_timeout:
            # A blob is committed as its part ends and linked when the whole request
            # commits: a sweep with a shorter grace could take a file of an upload
            # still in progress for an orphan.
            raise ConfigError(
                f"INTAKE_UPLOAD_GRACE ({upload_grace:g} s) must be longer than "
                f"INTAKE_UPLOAD_TIMEOUT ({upload_timeout:g} s)"
            )
        return cls(
            database_url=database_url,
            database_pool_size=reader.integer("INTAKE_DATABASE_POOL_SIZE", 10),
            database_pool_timeout=reader.number("INTAKE_DATABASE_POOL_TIMEOUT", 2.0),
            redis_url=reader.optional("INTAKE_REDIS_URL"),
            base_url=reader.optional("INTAKE_BASE_URL"),
            trusted_proxies=reader.networks("INTAKE_TRUSTED_PROXIES"),
            smtp_url=reader.optional("INTAKE_SMTP_URL"),
            mail_from=reader.text("INTAKE_MAIL_FROM", "intake@localhost"),
            verify_urls={
                provider: reader.text(f"INTAKE_{provider.name}_VERIFY_URL", url)
                for provider, url in DEFAULT_VERIFY_URLS.items()
            },
            challenge_timeout=reader.number("INTAKE_CHALLENGE_TIMEOUT", 3.0),
            rate_limits=RateLimits(
                public_burst=reader.rate(
                    "INTAKE_RATE_LIMIT_PUBLIC_BURST", defaults_rates.public_burst
                ),
                public_sustained=reader.rate(
                    "INTAKE_RATE_LIMIT_PUBLIC_SUSTAINED", defaults_rates.public_sustained
                ),
                public_form=reader.rate(
                    "INTAKE_RATE_LIMIT_PUBLIC_FORM", defaults_rates.public_form
                ),
                server_burst=reader.rate(
                    "INTAKE_RATE_LIMIT_SERVER_BURST", defaults_rates.server_burst
                ),
                server_sustained=reader.rate(
                    "INTAKE_RATE_LIMIT_SERVER_SUSTAINED", defaults_rates.server_sustained
                ),
                ipv6_prefix=reader.integer(
                    "INTAKE_RATE_LIMIT_IPV6_PREFIX", defaults_rates.ipv6_prefix, maximum=128
                ),
            ),
            limits=PayloadLimits(
                max_body=reader.integer("INTAKE_MAX_BODY_BYTES", defaults_limits.max_body),
                max_fields=reader.integer("INTAKE_MAX_FIELDS", defaults_limits.max_fields),
                max_name=reader.integer("INTAKE_MAX_FIELD_NAME_BYTES", defaults_limits.max_name),
                max_value=reader.integer("INTAKE_MAX_FIELD_VALUE_BYTES", defaults_limits.max_value),
                max_total=reader.integer("INTAKE_MAX_TOTAL_TEXT_BYTES", defaults_limits.max_total),
                max_depth=reader.integer("INTAKE_MAX_JSON_DEPTH", defaults_limits.max_depth),
                max_multipart_body=reader.integer(
                    "INTAKE_MAX_MULTIPART_BYTES", defaults_limits.max_multipart_body
                ),
            ),
            plans=plans,
            body_timeout=reader.number("INTAKE_BODY_TIMEOUT", 30.0),
            host=reader.text("INTAKE_HOST", "127.0.0.1"),
            port=reader.integer("INTAKE_PORT", 8000, maximum=65535),
            workers=reader.integer("INTAKE_WORKERS", 1),
            log_level=reader.text("INTAKE_LOG_LEVEL", "info").lower(),
            webhook_allow_private=reader.boolean("INTAKE_WEBHOOK_ALLOW_PRIVATE", False),
            outbox_retention_days=reader.integer("INTAKE_OUTBOX_RETENTION_DAYS", 7, minimum=0),
            spam_retention_days=reader.integer(
                "INTAKE_SPAM_RETENTION_DAYS", DEFAULT_SPAM_RETENTION_DAYS, minimum=0
            ),
            workspace_storage_limit=reader.integer(
                "INTAKE_WORKSPACE_STORAGE_LIMIT", DEFAULT_STORAGE_LIMIT, minimum=0
            ),
            metrics_token=reader.optional("INTAKE_METRICS_TOKEN"),
            blob_url=reader.optional("INTAKE_BLOB_URL") or default_blob_url(database_url),
            download_secret=reader.secret("INTAKE_DOWNLOAD_SECRET", MIN_SECRET_BYTES),
            download_ttl=reader.number(
                "INTAKE_DOWNLOAD_TTL", DEFAULT_DOWNLOAD_TTL, maximum=MAX_DOWNLOAD_TTL
            ),
            upload_timeout=upload_timeout,
            upload_grace=upload_grace,
        )

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite:")

    @property
    def is_postgres(self) -> bool:
        return self.database_url.startswith(("postgresql:", "postgres:"))

    @property
    def public_base_url(self) -> str:
        """Where clients reach the service, for the links it hands out: INTAKE_BASE_URL,
        else the address `intake serve` listens on (a wildcard address through loopback,
        an IPv6 literal in brackets)."""
        if self.base_url:
            return self.base_url.rstrip("/")
        host = _WILDCARD_HOSTS.get(self.host, self.host)
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"


# A server listening on every address is reached, from its own host, through loopback.
_WILDCARD_HOSTS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # noqa: S104


def default_blob_url(database_url: str) -> str | None:
    """A `blobs` folder beside a SQLite database file (`.intake/blobs` by default): SQLite
    means one host, and its data already lives there. None otherwise: with PostgreSQL the
    service may run on several hosts, where a local folder would split the uploads between
    them, so INTAKE_BLOB_URL must name a shared store; an in-memory database keeps nothing.
    """
    if not database_url.startswith("sqlite:"):
        return None
    try:
        path = database_path(database_url)
    except ValueError:
        return None  # the store refuses the URL itself, with a better message
    if path == SQLITE_MEMORY:
        return None
    return os.path.join(os.path.dirname(path), "blobs")


class _Reader:
    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def optional(self, name: str) -> str | None:
        value = self._env.get(name, "").strip()
        return value or None

    def text(self, name: str, default: str) -> str:
        return self.optional(name) or default

    def integer(
        self, name: str, default: int, *, minimum: int = 1, maximum: int | None = None
    ) -> int:
        raw = self.optional(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a whole number, not {raw!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise ConfigError(f"{name} is out of range: {value}")
        return value

    def number(self, name: str, default: float, *, maximum: float | None = None) -> float:
        raw = self.optional(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{name} must be a number, not {raw!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(f"{name} must be a finite number of seconds above zero, not {raw!r}")
        if maximum is not None and value > maximum:
            raise ConfigError(f"{name} is out of range: at most {maximum:g} seconds")
        return value

    def secret(self, name: str, min_length: int) -> str | None:
        """A secret's text; the message of a refusal never quotes it."""
        value = self.optional(name)
        if value is not None and len(value) < min_length:
            raise ConfigError(f"{name} must be at least {min_length} characters long")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        raw = self.optional(name)
        if raw is None:
            return default
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{name} must be true or false, not {raw!r}")

    def rate(self, name: str, default: RateRule) -> RateRule:
        raw = self.optional(name)
        if raw is None:
            return default
        try:
            return RateRule.parse(raw)
        except ValueError as error:
            raise ConfigError(f"{name}: {error}") from None

    def networks(self, name: str) -> tuple[Network, ...]:
        raw = self.optional(name)
        if raw is None:
            return ()
        try:
            return tuple(
                ipaddress.ip_network(part.strip(), strict=False)
                for part in raw.split(",")
                if part.strip()
            )
        except ValueError as error:
            raise ConfigError(f"{name}: {error}") from None
