"""Every environment variable intake reads, declared once: name, default, reading, doc.

docs/configuration.md's table is made from these (`python -m intake.config --markdown`),
in this order; a test holds the two equal.
"""

from __future__ import annotations

from typing import Any

from intake.config import akismet_variables as av
from intake.config.dashboard_variables import DASHBOARD_TIMEZONE
from intake.config.destination_variables import (
    MAX_CHAT_DESTINATIONS_PER_FORM,
    MAX_RECIPIENTS_PER_FORM,
    MAX_WEBHOOKS_PER_FORM,
)
from intake.config.privacy_variables import (
    CLIENT_IP_FULL_HOURS,
    OUTBOX_RETENTION_DAYS,
    RETENTION_SWEEP_INTERVAL,
    SECRET_KEY,
    SECRET_KEYS_OLD,
    SPAM_RETENTION_DAYS,
    STORE_CLIENT_IP,
)
from intake.config.spam_variables import SPAM_CACHE_TOKENS, SPAM_SETTLE_DAYS
from intake.config.variable import (
    Network,
    Variable,
    boolean,
    choice,
    integer,
    lowercase,
    networks,
    rate,
    seconds,
    secret,
    text,
)
from intake.domain.chat import DEFAULT_TELEGRAM_API_URL
from intake.domain.deliveries import DEFAULT_MAIL_FROM
from intake.domain.form_messages import (
    DEFAULT_AUTORESPONSE_HOURLY_LIMIT,
    MAX_AUTORESPONSE_HOURLY_LIMIT,
)
from intake.domain.limits import DEFAULT_UPLOAD_TIMEOUT, PayloadLimits
from intake.domain.model import ChallengeProvider, Plan
from intake.domain.quota import DEFAULT_PLANS, DEFAULT_STORAGE_LIMIT
from intake.domain.ratelimit import RateLimits
from intake.domain.signing import DEFAULT_LINK_TTL, MIN_SECRET_BYTES
from intake.ports.challenge import DEFAULT_TIMEOUT as DEFAULT_CHALLENGE_TIMEOUT
from intake.ports.challenge import DEFAULT_VERIFY_URLS
from intake.service.sweep import DEFAULT_UPLOAD_GRACE

DEFAULT_DATABASE_URL = "sqlite:///.intake/intake.db"
# Ten years: far enough for any use, and well inside what a date can hold.
MAX_DOWNLOAD_TTL = 10 * 366 * 86400.0
# The defaults of the code that uses each value, which the variables below only name.
_RATES = RateLimits()
_LIMITS = PayloadLimits()

DATABASE_URL = Variable(
    "INTAKE_DATABASE_URL",
    DEFAULT_DATABASE_URL,
    text,
    (
        "the store: `sqlite:///relative.db`, `sqlite:////absolute.db`, `sqlite:///:memory:`, or "
        "`postgresql://user@host:5432/db`"
    ),
)
DATABASE_POOL_SIZE = Variable(
    "INTAKE_DATABASE_POOL_SIZE",
    10,
    integer(),
    "PostgreSQL connections per worker",
)
DATABASE_POOL_TIMEOUT = Variable(
    "INTAKE_DATABASE_POOL_TIMEOUT",
    2.0,
    seconds(),
    "seconds a request waits for a free connection before `503`",
)
REDIS_URL: Variable[str | None] = Variable(
    "INTAKE_REDIS_URL",
    None,
    text,
    "Redis for the rate-limit windows shared by several workers",
)
BASE_URL: Variable[str | None] = Variable(
    "INTAKE_BASE_URL",
    None,
    text,
    (
        "the public address of the service, for the links it prints and hands out (file downloads "
        "in webhooks, mail and exports); unset, `http://INTAKE_HOST:INTAKE_PORT`, with a wildcard "
        "host (`0.0.0.0`, `::`) shown as loopback"
    ),
)
TRUSTED_PROXIES: Variable[tuple[Network, ...]] = Variable(
    "INTAKE_TRUSTED_PROXIES",
    (),
    networks,
    "comma-separated IPs or CIDRs of reverse proxies whose `X-Forwarded-For` entry is believed",
    shown_default="unset",
)
HOST = Variable("INTAKE_HOST", "127.0.0.1", text, "`intake serve` address")
PORT = Variable("INTAKE_PORT", 8000, integer(maximum=65535), "`intake serve` port")
WORKERS = Variable(
    "INTAKE_WORKERS",
    1,
    integer(),
    "`intake serve` worker processes (more than one needs Redis)",
)
HTTP_PROTOCOL = Variable(
    "INTAKE_HTTP_PROTOCOL",
    "httptools",
    choice("httptools", "h11"),
    (
        "`httptools` or `h11`: the HTTP/1.1 parser of `intake serve`, both with the same header "
        "and body deadlines and head limit; `h11` is pure Python, `httptools` faster "
        "([performance.md](performance.md#tuning-a-deployment))"
    ),
)
LOG_LEVEL = Variable(
    "INTAKE_LOG_LEVEL",
    "info",
    lowercase,
    (
        "`trace`, `debug`, `info`, `warning`, `error`, `critical`: the level of intake's own log "
        "records; other libraries' records are written from `warning` up only, without their text, "
        "whatever the level ([operations.md](operations.md#logs))"
    ),
)
TURNSTILE_VERIFY_URL = Variable(
    "INTAKE_TURNSTILE_VERIFY_URL",
    DEFAULT_VERIFY_URLS[ChallengeProvider.TURNSTILE],
    text,
    "Turnstile verification endpoint",
    shown_default="Cloudflare's siteverify",
)
HCAPTCHA_VERIFY_URL = Variable(
    "INTAKE_HCAPTCHA_VERIFY_URL",
    DEFAULT_VERIFY_URLS[ChallengeProvider.HCAPTCHA],
    text,
    "hCaptcha verification endpoint",
    shown_default="hCaptcha's siteverify",
)
RECAPTCHA_VERIFY_URL = Variable(
    "INTAKE_RECAPTCHA_VERIFY_URL",
    DEFAULT_VERIFY_URLS[ChallengeProvider.RECAPTCHA],
    text,
    "reCAPTCHA verification endpoint",
    shown_default="Google's siteverify",
)
CHALLENGE_TIMEOUT = Variable(
    "INTAKE_CHALLENGE_TIMEOUT",
    DEFAULT_CHALLENGE_TIMEOUT,
    seconds(),
    "seconds to wait for a challenge provider before keeping the submission as `unverified`",
)
BODY_TIMEOUT = Variable(
    "INTAKE_BODY_TIMEOUT",
    30.0,
    seconds(),
    ("seconds a client has to send its whole body, and, under `intake serve`, its request headers"),
)
RATE_LIMIT_PUBLIC_BURST = Variable(
    "INTAKE_RATE_LIMIT_PUBLIC_BURST",
    _RATES.public_burst,
    rate,
    "public endpoint, per client network and form",
)
RATE_LIMIT_PUBLIC_SUSTAINED = Variable(
    "INTAKE_RATE_LIMIT_PUBLIC_SUSTAINED",
    _RATES.public_sustained,
    rate,
    "public endpoint, per client network and form",
)
RATE_LIMIT_PUBLIC_FORM = Variable(
    "INTAKE_RATE_LIMIT_PUBLIC_FORM",
    _RATES.public_form,
    rate,
    "public endpoint, per form",
)
RATE_LIMIT_SERVER_BURST = Variable(
    "INTAKE_RATE_LIMIT_SERVER_BURST",
    _RATES.server_burst,
    rate,
    "server endpoint, per API key and form",
)
RATE_LIMIT_SERVER_SUSTAINED = Variable(
    "INTAKE_RATE_LIMIT_SERVER_SUSTAINED",
    _RATES.server_sustained,
    rate,
    "server endpoint, per API key and form",
)
RATE_LIMIT_IPV6_PREFIX = Variable(
    "INTAKE_RATE_LIMIT_IPV6_PREFIX",
    _RATES.ipv6_prefix,
    integer(maximum=128),
    (
        "bits of an IPv6 address (1 to 128) that make one client network, for the public endpoint's"
        ' limits and `Idempotency-Key`s (decisions.md "Who a client is"); an IPv4 client is its '
        "address"
    ),
)
MAX_BODY_BYTES = Variable(
    "INTAKE_MAX_BODY_BYTES",
    _LIMITS.max_body,
    integer(),
    "body limit, multipart file parts not counted",
)
MAX_MULTIPART_BYTES = Variable(
    "INTAKE_MAX_MULTIPART_BYTES",
    _LIMITS.max_multipart_body,
    integer(),
    "a whole multipart request, file parts included",
)
MAX_FIELDS = Variable(
    "INTAKE_MAX_FIELDS",
    _LIMITS.max_fields,
    integer(),
    "fields received, control fields included",
)
MAX_FIELD_NAME_BYTES = Variable(
    "INTAKE_MAX_FIELD_NAME_BYTES",
    _LIMITS.max_name,
    integer(),
    "one field name, UTF-8 bytes",
)
MAX_FIELD_VALUE_BYTES = Variable(
    "INTAKE_MAX_FIELD_VALUE_BYTES",
    _LIMITS.max_value,
    integer(),
    "one value, UTF-8 bytes",
)
MAX_TOTAL_TEXT_BYTES = Variable(
    "INTAKE_MAX_TOTAL_TEXT_BYTES",
    _LIMITS.max_total,
    integer(),
    "all values added up",
)
MAX_JSON_DEPTH = Variable(
    "INTAKE_MAX_JSON_DEPTH",
    _LIMITS.max_depth,
    integer(),
    "nesting of JSON objects",
)
PLAN_FREE_LIMIT = Variable(
    "INTAKE_PLAN_FREE_LIMIT",
    DEFAULT_PLANS[Plan.FREE].monthly_limit,
    integer(minimum=0),
    "submissions a month on the free plan (no overage)",
)
PLAN_STARTER_LIMIT = Variable(
    "INTAKE_PLAN_STARTER_LIMIT",
    DEFAULT_PLANS[Plan.STARTER].monthly_limit,
    integer(minimum=0),
    "starter plan; with overage the ceiling is twice this",
)
PLAN_BUSINESS_LIMIT = Variable(
    "INTAKE_PLAN_BUSINESS_LIMIT",
    DEFAULT_PLANS[Plan.BUSINESS].monthly_limit,
    integer(minimum=0),
    "business plan; with overage the ceiling is twice this",
)
SMTP_URL: Variable[str | None] = Variable(
    "INTAKE_SMTP_URL",
    None,
    text,
    "`smtp://host:port` for notification mail and the dashboard's invitations",
)
MAIL_FROM = Variable("INTAKE_MAIL_FROM", DEFAULT_MAIL_FROM, text, "sender of notification mail")
AUTORESPONSE_HOURLY_LIMIT = Variable(
    "INTAKE_AUTORESPONSE_HOURLY_LIMIT",
    DEFAULT_AUTORESPONSE_HOURLY_LIMIT,
    integer(maximum=MAX_AUTORESPONSE_HOURLY_LIMIT),
    "confirmation mails a form with the autoresponder on sends in any hour, unless it sets "
    "its own limit (one per address per hour in any case)",
)
WEBHOOK_ALLOW_PRIVATE = Variable(
    "INTAKE_WEBHOOK_ALLOW_PRIVATE",
    False,
    boolean,
    "allow webhook URLs on private addresses and plain http",
)
TELEGRAM_API_URL = Variable(
    "INTAKE_TELEGRAM_API_URL",
    DEFAULT_TELEGRAM_API_URL,
    text,
    "Telegram's Bot API, where Telegram chat destinations are posted",
)
WORKSPACE_STORAGE_LIMIT = Variable(
    "INTAKE_WORKSPACE_STORAGE_LIMIT",
    DEFAULT_STORAGE_LIMIT,
    integer(minimum=0),
    (
        "bytes of uploaded files a workspace may keep (1 GiB), counting accepted, spam and "
        "unverified submissions alike; a submission whose files would pass it is `429 "
        "quota_exceeded` (`0`: no files at all). A workspace's own `--storage-limit` replaces it"
    ),
)
METRICS_TOKEN: Variable[str | None] = Variable(
    "INTAKE_METRICS_TOKEN",
    None,
    text,
    (
        "the bearer token a scrape of `GET /metrics` must send (`Authorization: Bearer <token>`; a "
        "long random value); unset, `/metrics` is not served: 404, as an unknown path "
        "([operations.md](operations.md#who-may-read-it))"
    ),
)
BLOB_URL: Variable[str | None] = Variable(
    "INTAKE_BLOB_URL",
    None,
    text,
    (
        "where file uploads are stored: a directory (`file:///srv/intake/blobs` or a plain path), "
        "`s3://bucket/prefix?endpoint=...&region=...`, or `memory://`; used by file uploads "
        "([uploads.md](uploads.md))"
    ),
    shown_default=("`blobs` beside the SQLite database (`.intake/blobs`); unset with PostgreSQL"),
)
DOWNLOAD_SECRET: Variable[str | None] = Variable(
    "INTAKE_DOWNLOAD_SECRET",
    None,
    secret(MIN_SECRET_BYTES),
    (
        "the key that signs file download links: at least 32 characters, the same in every process "
        "of the deployment; unset, a random key is made once and kept in the database, which every "
        "process then shares. Changing it invalidates every link handed out"
    ),
)
DOWNLOAD_TTL = Variable(
    "INTAKE_DOWNLOAD_TTL",
    DEFAULT_LINK_TTL.total_seconds(),
    seconds(maximum=MAX_DOWNLOAD_TTL),
    (
        "seconds a download link works (7 days), at most ten years; a webhook retry or a "
        "notification mail gets a link made as it is sent"
    ),
)
UPLOAD_TIMEOUT = Variable(
    "INTAKE_UPLOAD_TIMEOUT",
    DEFAULT_UPLOAD_TIMEOUT,
    seconds(),
    (
        "seconds a client has to send a multipart body to a form that accepts files "
        "(`INTAKE_BODY_TIMEOUT` applies to every other body)"
    ),
)
UPLOAD_GRACE = Variable(
    "INTAKE_UPLOAD_GRACE",
    DEFAULT_UPLOAD_GRACE.total_seconds(),
    seconds(),
    (
        "seconds `intake purge` leaves an uploaded file that no submission links (the leftover of "
        "an interrupted request) before deleting it; must be longer than `INTAKE_UPLOAD_TIMEOUT`, "
        "so that a file of an upload still in progress is never taken for one"
    ),
)
# Read by prometheus-client and intake.metrics (MULTIPROC_ENV), not by the settings.
PROMETHEUS_MULTIPROC_DIR: Variable[str | None] = Variable(
    "PROMETHEUS_MULTIPROC_DIR",
    None,
    text,
    (
        "directory where the workers of `intake serve` share their metrics; `--workers N` above 1 "
        "makes a temporary one when unset ([operations.md](operations.md#several-workers))"
    ),
)

# docs/configuration.md's table, row by row.
VARIABLES: tuple[Variable[Any], ...] = (
    DATABASE_URL,
    DATABASE_POOL_SIZE,
    DATABASE_POOL_TIMEOUT,
    REDIS_URL,
    BASE_URL,
    DASHBOARD_TIMEZONE,
    TRUSTED_PROXIES,
    HOST,
    PORT,
    WORKERS,
    HTTP_PROTOCOL,
    LOG_LEVEL,
    TURNSTILE_VERIFY_URL,
    HCAPTCHA_VERIFY_URL,
    RECAPTCHA_VERIFY_URL,
    CHALLENGE_TIMEOUT,
    av.AKISMET_API_KEY,
    av.AKISMET_SITE_URL,
    av.AKISMET_TIMEOUT,
    av.AKISMET_API_URL,
    BODY_TIMEOUT,
    RATE_LIMIT_PUBLIC_BURST,
    RATE_LIMIT_PUBLIC_SUSTAINED,
    RATE_LIMIT_PUBLIC_FORM,
    RATE_LIMIT_SERVER_BURST,
    RATE_LIMIT_SERVER_SUSTAINED,
    RATE_LIMIT_IPV6_PREFIX,
    MAX_BODY_BYTES,
    MAX_MULTIPART_BYTES,
    MAX_FIELDS,
    MAX_FIELD_NAME_BYTES,
    MAX_FIELD_VALUE_BYTES,
    MAX_TOTAL_TEXT_BYTES,
    MAX_JSON_DEPTH,
    PLAN_FREE_LIMIT,
    PLAN_STARTER_LIMIT,
    PLAN_BUSINESS_LIMIT,
    SMTP_URL,
    MAIL_FROM,
    AUTORESPONSE_HOURLY_LIMIT,
    WEBHOOK_ALLOW_PRIVATE,
    TELEGRAM_API_URL,
    MAX_RECIPIENTS_PER_FORM,
    MAX_WEBHOOKS_PER_FORM,
    MAX_CHAT_DESTINATIONS_PER_FORM,
    OUTBOX_RETENTION_DAYS,
    SPAM_RETENTION_DAYS,
    SPAM_CACHE_TOKENS,
    SPAM_SETTLE_DAYS,
    RETENTION_SWEEP_INTERVAL,
    STORE_CLIENT_IP,
    CLIENT_IP_FULL_HOURS,
    WORKSPACE_STORAGE_LIMIT,
    METRICS_TOKEN,
    BLOB_URL,
    DOWNLOAD_SECRET,
    SECRET_KEY,
    SECRET_KEYS_OLD,
    DOWNLOAD_TTL,
    UPLOAD_TIMEOUT,
    UPLOAD_GRACE,
    PROMETHEUS_MULTIPROC_DIR,
)
