"""The variables of the optional Akismet opinion on spam (docs/scoring.md, "Akismet"):
off unless both the key and the site are set. Declared as variables.py declares the
rest, whose table lists them in its order."""

from __future__ import annotations

from intake.config.variable import ConfigError, Variable, seconds, secret
from intake.ports.spam_opinion import DEFAULT_AKISMET_API_URL, DEFAULT_CHECK_TIMEOUT

# A check waits at most this long: a submission never waits on Akismet for more.
MAX_CHECK_TIMEOUT = 5.0


def site_url(name: str, raw: str) -> str:
    if not raw.startswith(("http://", "https://")):
        raise ConfigError(f"{name} must be the site's full URL, starting with https://")
    return raw


AKISMET_API_KEY: Variable[str | None] = Variable(
    "INTAKE_AKISMET_API_KEY",
    None,
    secret(8),
    (
        "an Akismet API key: with `INTAKE_AKISMET_SITE_URL`, public submissions are also checked "
        "by Akismet, and owners' triage is reported to it ([scoring.md](scoring.md#akismet))"
    ),
    shown_default="unset: Akismet is not asked",
)
AKISMET_SITE_URL: Variable[str | None] = Variable(
    "INTAKE_AKISMET_SITE_URL",
    None,
    site_url,
    "the site registered with the Akismet key (Akismet's `blog`), such as `https://example.org`",
)
AKISMET_TIMEOUT = Variable(
    "INTAKE_AKISMET_TIMEOUT",
    DEFAULT_CHECK_TIMEOUT,
    seconds(maximum=MAX_CHECK_TIMEOUT),
    (
        "seconds a submission waits for Akismet's verdict; past them the built-in filter decides "
        "alone"
    ),
)
AKISMET_API_URL = Variable(
    "INTAKE_AKISMET_API_URL",
    DEFAULT_AKISMET_API_URL,
    site_url,
    "Akismet's API (a proxy or a compatible service may stand in)",
)
