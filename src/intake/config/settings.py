"""The settings of every command, each field read from the variable it names."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from attrs import Factory, field, fields, frozen

from intake.adapters.sqlite.connection import MEMORY as SQLITE_MEMORY
from intake.adapters.sqlite.connection import database_path
from intake.config import akismet_variables as av
from intake.config import dashboard_variables as dashv
from intake.config import destination_variables as dv
from intake.config import privacy_variables as pv
from intake.config import spam_variables as sv
from intake.config import variables as v
from intake.config.variable import ConfigError, Network, Variable
from intake.domain.destination_limits import DestinationLimits
from intake.domain.limits import PayloadLimits
from intake.domain.model import ChallengeProvider, Plan
from intake.domain.privacy import ClientIpStorage
from intake.domain.quota import DEFAULT_PLANS, PlanTerms
from intake.domain.ratelimit import RateLimits

T = TypeVar("T")
Environment = Mapping[str, str]
# The metadata key of a field's reader: environment -> value, None for the field's default.
_READ = "intake.config.read"


def _variable(variable: Variable[T], *, repr: bool = True) -> T:
    """A field whose default and reading are the variable's."""
    return field(default=variable.default, repr=repr, metadata={_READ: variable.read})


def _variables(reader: Callable[[Environment], T]) -> T:
    """A field made of several variables: its default is what they read unset."""
    return field(factory=lambda: reader({}), metadata={_READ: reader})


def _read_verify_urls(env: Environment) -> Mapping[ChallengeProvider, str]:
    return {provider: variable.read(env) for provider, variable in _VERIFY_URLS.items()}


def _read_rate_limits(env: Environment) -> RateLimits:
    return RateLimits(
        public_burst=v.RATE_LIMIT_PUBLIC_BURST.read(env),
        public_sustained=v.RATE_LIMIT_PUBLIC_SUSTAINED.read(env),
        public_form=v.RATE_LIMIT_PUBLIC_FORM.read(env),
        server_burst=v.RATE_LIMIT_SERVER_BURST.read(env),
        server_sustained=v.RATE_LIMIT_SERVER_SUSTAINED.read(env),
        ipv6_prefix=v.RATE_LIMIT_IPV6_PREFIX.read(env),
    )


def _read_payload_limits(env: Environment) -> PayloadLimits:
    return PayloadLimits(
        max_body=v.MAX_BODY_BYTES.read(env),
        max_fields=v.MAX_FIELDS.read(env),
        max_name=v.MAX_FIELD_NAME_BYTES.read(env),
        max_value=v.MAX_FIELD_VALUE_BYTES.read(env),
        max_total=v.MAX_TOTAL_TEXT_BYTES.read(env),
        max_depth=v.MAX_JSON_DEPTH.read(env),
        max_multipart_body=v.MAX_MULTIPART_BYTES.read(env),
    )


def _read_destination_limits(env: Environment) -> DestinationLimits:
    return DestinationLimits(
        recipients=dv.MAX_RECIPIENTS_PER_FORM.read(env),
        webhooks=dv.MAX_WEBHOOKS_PER_FORM.read(env),
        chats=dv.MAX_CHAT_DESTINATIONS_PER_FORM.read(env),
    )


def _read_plans(env: Environment) -> Mapping[Plan, PlanTerms]:
    # A plan's limit is configurable; whether it allows overage is the plan itself.
    return {
        plan: PlanTerms(monthly_limit=_PLAN_LIMITS[plan].read(env), overage=terms.overage)
        for plan, terms in DEFAULT_PLANS.items()
    }


_VERIFY_URLS = {
    ChallengeProvider.TURNSTILE: v.TURNSTILE_VERIFY_URL,
    ChallengeProvider.HCAPTCHA: v.HCAPTCHA_VERIFY_URL,
    ChallengeProvider.RECAPTCHA: v.RECAPTCHA_VERIFY_URL,
}
_PLAN_LIMITS = {
    Plan.FREE: v.PLAN_FREE_LIMIT,
    Plan.STARTER: v.PLAN_STARTER_LIMIT,
    Plan.BUSINESS: v.PLAN_BUSINESS_LIMIT,
}


@frozen
class Settings:
    database_url: str = _variable(v.DATABASE_URL)
    database_pool_size: int = _variable(v.DATABASE_POOL_SIZE)
    database_pool_timeout: float = _variable(v.DATABASE_POOL_TIMEOUT)
    redis_url: str | None = _variable(v.REDIS_URL)
    base_url: str | None = _variable(v.BASE_URL)
    dashboard_timezone: ZoneInfo = _variable(dashv.DASHBOARD_TIMEZONE)  # noqa: RUF009 - frozen
    trusted_proxies: tuple[Network, ...] = _variable(v.TRUSTED_PROXIES)
    smtp_url: str | None = _variable(v.SMTP_URL)
    mail_from: str = _variable(v.MAIL_FROM)
    autoresponse_hourly_limit: int = _variable(v.AUTORESPONSE_HOURLY_LIMIT)
    verify_urls: Mapping[ChallengeProvider, str] = _variables(_read_verify_urls)
    challenge_timeout: float = _variable(v.CHALLENGE_TIMEOUT)
    akismet_api_key: str | None = _variable(av.AKISMET_API_KEY, repr=False)
    akismet_site_url: str | None = _variable(av.AKISMET_SITE_URL)
    akismet_timeout: float = _variable(av.AKISMET_TIMEOUT)
    akismet_api_url: str = _variable(av.AKISMET_API_URL)
    rate_limits: RateLimits = _variables(_read_rate_limits)  # noqa: RUF009 - an attrs field
    limits: PayloadLimits = _variables(_read_payload_limits)  # noqa: RUF009 - an attrs field
    plans: Mapping[Plan, PlanTerms] = _variables(_read_plans)
    body_timeout: float = _variable(v.BODY_TIMEOUT)
    host: str = _variable(v.HOST)
    port: int = _variable(v.PORT)
    workers: int = _variable(v.WORKERS)
    http_protocol: str = _variable(v.HTTP_PROTOCOL)
    log_level: str = _variable(v.LOG_LEVEL)
    webhook_allow_private: bool = _variable(v.WEBHOOK_ALLOW_PRIVATE)
    telegram_api_url: str = _variable(v.TELEGRAM_API_URL)
    destination_limits: DestinationLimits = _variables(_read_destination_limits)  # noqa: RUF009
    outbox_retention_days: int = _variable(pv.OUTBOX_RETENTION_DAYS)
    spam_retention_days: int = _variable(pv.SPAM_RETENTION_DAYS)
    spam_cache_tokens: int = _variable(sv.SPAM_CACHE_TOKENS)
    spam_settle_days: int = _variable(sv.SPAM_SETTLE_DAYS)
    retention_sweep_interval: int = _variable(pv.RETENTION_SWEEP_INTERVAL)
    # The variable reads text; the field holds the choice.
    store_client_ip: ClientIpStorage = field(
        default=ClientIpStorage(pv.STORE_CLIENT_IP.default),
        converter=ClientIpStorage,
        metadata={_READ: pv.STORE_CLIENT_IP.read},
    )
    client_ip_full_hours: int = _variable(pv.CLIENT_IP_FULL_HOURS)
    workspace_storage_limit: int = _variable(v.WORKSPACE_STORAGE_LIMIT)
    metrics_token: str | None = _variable(v.METRICS_TOKEN, repr=False)
    # Unset, it follows the database (default_blob_url): the variable's None leaves it so.
    blob_url: str | None = field(
        default=Factory(lambda self: default_blob_url(self.database_url), takes_self=True),
        metadata={_READ: v.BLOB_URL.read},
    )
    download_secret: str | None = _variable(v.DOWNLOAD_SECRET, repr=False)
    secret_key: str | None = _variable(pv.SECRET_KEY, repr=False)
    secret_keys_old: tuple[str, ...] = _variable(pv.SECRET_KEYS_OLD, repr=False)
    download_ttl: float = _variable(v.DOWNLOAD_TTL)
    upload_timeout: float = _variable(v.UPLOAD_TIMEOUT)
    upload_grace: float = _variable(v.UPLOAD_GRACE)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for attribute in fields(cls):
            value = attribute.metadata[_READ](env)
            if value is not None:  # None: the field's default, the same or derived
                values[attribute.name] = value
        settings = cls(**values)
        if settings.upload_grace <= settings.upload_timeout:
            # A blob is committed as its part ends and linked when the whole request
            # commits: a sweep with a shorter grace could take a file of an upload
            # still in progress for an orphan.
            raise ConfigError(
                f"{v.UPLOAD_GRACE.name} ({settings.upload_grace:g} s) must be longer than "
                f"{v.UPLOAD_TIMEOUT.name} ({settings.upload_timeout:g} s)"
            )
        if (settings.akismet_api_key is None) != (settings.akismet_site_url is None):
            # Akismet takes the key only with the site it was registered for.
            raise ConfigError(
                f"{av.AKISMET_API_KEY.name} and {av.AKISMET_SITE_URL.name} go together: "
                "set both, or neither"
            )
        return settings

    @property
    def akismet_on(self) -> bool:
        """Whether Akismet is asked (docs/scoring.md, "Akismet")."""
        return self.akismet_api_key is not None and self.akismet_site_url is not None

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
