"""Configuration from INTAKE_* variables, read from a plain dict."""

from __future__ import annotations

import ipaddress
import os

import pytest

from intake.config import DEFAULT_DATABASE_URL, MAX_DOWNLOAD_TTL, ConfigError, Settings
from intake.domain.limits import PayloadLimits
from intake.domain.model import ChallengeProvider, Plan
from intake.domain.quota import DEFAULT_PLANS, PlanTerms
from intake.domain.ratelimit import RateLimits, RateRule
from intake.ports.challenge import DEFAULT_VERIFY_URLS

SECRET = "a-download-secret-of-more-than-32-characters"


def test_an_empty_environment_gives_the_defaults() -> None:
    settings = Settings.from_env({})

    assert settings == Settings()
    assert settings.database_url == DEFAULT_DATABASE_URL == "sqlite:///.intake/intake.db"
    assert settings.is_sqlite
    assert not settings.is_postgres
    assert settings.redis_url is None
    assert settings.base_url is None
    assert settings.trusted_proxies == ()
    assert settings.smtp_url is None
    assert settings.mail_from == "intake@localhost"
    assert settings.verify_urls == DEFAULT_VERIFY_URLS
    assert settings.challenge_timeout == 3.0
    assert settings.rate_limits == RateLimits()
    assert settings.limits == PayloadLimits()
    assert settings.plans == DEFAULT_PLANS
    assert settings.body_timeout == 30.0
    assert (settings.host, settings.port, settings.workers) == ("127.0.0.1", 8000, 1)
    assert settings.http_protocol == "httptools"
    assert settings.log_level == "info"
    assert settings.webhook_allow_private is False
    assert settings.outbox_retention_days == 7
    assert settings.metrics_token is None
    assert settings.blob_url == os.path.join(".intake", "blobs")
    assert settings.download_secret is None
    assert settings.download_ttl == 7 * 86400
    assert settings.upload_timeout == 300
    assert settings.upload_grace == 3600
    assert settings.public_base_url == "http://127.0.0.1:8000"


def test_blank_values_count_as_unset() -> None:
    assert Settings.from_env({"INTAKE_DATABASE_URL": "  ", "INTAKE_PORT": ""}) == Settings()


def test_every_variable_is_read() -> None:
    settings = Settings.from_env(
        {
            "INTAKE_DATABASE_URL": "postgresql://intake@db/intake",
            "INTAKE_REDIS_URL": "redis://cache:6379/0",
            "INTAKE_BASE_URL": "https://forms.example.com",
            "INTAKE_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.7,fd00::/8",
            "INTAKE_SMTP_URL": "smtp://mail:25",
            "INTAKE_MAIL_FROM": "forms@example.com",
            "INTAKE_TURNSTILE_VERIFY_URL": "http://localhost:9001/turnstile",
            "INTAKE_HCAPTCHA_VERIFY_URL": "http://localhost:9001/hcaptcha",
            "INTAKE_RECAPTCHA_VERIFY_URL": "http://localhost:9001/recaptcha",
            "INTAKE_CHALLENGE_TIMEOUT": "1.5",
            "INTAKE_RATE_LIMIT_PUBLIC_BURST": "10/60",
            "INTAKE_RATE_LIMIT_PUBLIC_SUSTAINED": "40/900",
            "INTAKE_RATE_LIMIT_PUBLIC_FORM": "1000/600",
            "INTAKE_RATE_LIMIT_SERVER_BURST": "100/30",
            "INTAKE_RATE_LIMIT_SERVER_SUSTAINED": "900/600",
            "INTAKE_MAX_BODY_BYTES": "1000",
            "INTAKE_MAX_FIELDS": "10",
            "INTAKE_MAX_FIELD_NAME_BYTES": "20",
            "INTAKE_MAX_FIELD_VALUE_BYTES": "300",
            "INTAKE_MAX_TOTAL_TEXT_BYTES": "900",
            "INTAKE_MAX_JSON_DEPTH": "2",
            "INTAKE_MAX_MULTIPART_BYTES": "5000",
            "INTAKE_PLAN_FREE_LIMIT": "0",
            "INTAKE_PLAN_STARTER_LIMIT": "1500",
            "INTAKE_PLAN_BUSINESS_LIMIT": "15000",
            "INTAKE_BODY_TIMEOUT": "10",
            "INTAKE_HOST": "0.0.0.0",
            "INTAKE_PORT": "9000",
            "INTAKE_WORKERS": "4",
            "INTAKE_HTTP_PROTOCOL": "H11",
            "INTAKE_LOG_LEVEL": "DEBUG",
            "INTAKE_WEBHOOK_ALLOW_PRIVATE": "true",
            "INTAKE_OUTBOX_RETENTION_DAYS": "0",
            "INTAKE_METRICS_TOKEN": "scrape-token",
            "INTAKE_BLOB_URL": "s3://uploads/prod?region=eu-west-1",
            "INTAKE_DOWNLOAD_SECRET": SECRET,
            "INTAKE_DOWNLOAD_TTL": "86400",
            "INTAKE_UPLOAD_TIMEOUT": "600",
            "INTAKE_UPLOAD_GRACE": "7200",
        }
    )

    assert settings.database_url == "postgresql://intake@db/intake"
    assert settings.is_postgres
    assert settings.redis_url == "redis://cache:6379/0"
    assert settings.base_url == "https://forms.example.com"
    assert settings.trusted_proxies == (
        ipaddress.ip_network("10.0.0.0/8"),
        ipaddress.ip_network("192.168.1.7/32"),
        ipaddress.ip_network("fd00::/8"),
    )
    assert settings.smtp_url == "smtp://mail:25"
    assert settings.mail_from == "forms@example.com"
    assert settings.verify_urls == {
        ChallengeProvider.TURNSTILE: "http://localhost:9001/turnstile",
        ChallengeProvider.HCAPTCHA: "http://localhost:9001/hcaptcha",
        ChallengeProvider.RECAPTCHA: "http://localhost:9001/recaptcha",
    }
    assert settings.challenge_timeout == 1.5
    assert settings.rate_limits == RateLimits(
        public_burst=RateRule(10, 60),
        public_sustained=RateRule(40, 900),
        public_form=RateRule(1000, 600),
        server_burst=RateRule(100, 30),
        server_sustained=RateRule(900, 600),
    )
    assert settings.limits == PayloadLimits(
        max_body=1000,
        max_fields=10,
        max_name=20,
        max_value=300,
        max_total=900,
        max_depth=2,
        max_multipart_body=5000,
    )
    assert settings.plans == {
        Plan.FREE: PlanTerms(0, overage=False),
        Plan.STARTER: PlanTerms(1500, overage=True),
        Plan.BUSINESS: PlanTerms(15000, overage=True),
    }
    assert settings.body_timeout == 10.0
    assert (settings.host, settings.port, settings.workers) == ("0.0.0.0", 9000, 4)
    assert settings.http_protocol == "h11"
    assert settings.log_level == "debug"
    assert settings.webhook_allow_private is True
    assert settings.outbox_retention_days == 0
    assert settings.metrics_token == "scrape-token"
    assert settings.blob_url == "s3://uploads/prod?region=eu-west-1"
    assert settings.download_secret == SECRET
    assert settings.download_ttl == 86400.0
    assert settings.upload_timeout == 600.0
    assert settings.upload_grace == 7200.0
    assert settings.public_base_url == "https://forms.example.com"


@pytest.mark.parametrize("url", ["postgresql://h/db", "postgres://h/db"])
def test_both_postgresql_spellings_are_postgres(url: str) -> None:
    assert Settings.from_env({"INTAKE_DATABASE_URL": url}).is_postgres


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", True), ("yes", True), ("ON", True), ("0", False), ("false", False), ("Off", False)],
)
def test_a_boolean_takes_the_usual_spellings(raw: str, expected: bool) -> None:
    settings = Settings.from_env({"INTAKE_WEBHOOK_ALLOW_PRIVATE": raw})

    assert settings.webhook_allow_private is expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("INTAKE_RATE_LIMIT_PUBLIC_BURST", "10"),
        ("INTAKE_RATE_LIMIT_PUBLIC_SUSTAINED", "0/600"),
        ("INTAKE_RATE_LIMIT_PUBLIC_FORM", "ten/600"),
        ("INTAKE_RATE_LIMIT_SERVER_BURST", "50/0"),
        ("INTAKE_RATE_LIMIT_SERVER_SUSTAINED", "600 per 600"),
        ("INTAKE_MAX_BODY_BYTES", "256KB"),
        ("INTAKE_MAX_FIELDS", "0"),
        ("INTAKE_MAX_FIELD_NAME_BYTES", "-1"),
        ("INTAKE_MAX_FIELD_VALUE_BYTES", "1.5"),
        ("INTAKE_MAX_TOTAL_TEXT_BYTES", "lots"),
        ("INTAKE_MAX_JSON_DEPTH", "0"),
        ("INTAKE_MAX_MULTIPART_BYTES", "x"),
        ("INTAKE_PLAN_FREE_LIMIT", "-1"),
        ("INTAKE_PLAN_STARTER_LIMIT", "many"),
        ("INTAKE_PORT", "0"),
        ("INTAKE_PORT", "65536"),
        ("INTAKE_PORT", "http"),
        ("INTAKE_WORKERS", "0"),
        ("INTAKE_HTTP_PROTOCOL", "h2"),
        ("INTAKE_CHALLENGE_TIMEOUT", "0"),
        ("INTAKE_CHALLENGE_TIMEOUT", "-3"),
        ("INTAKE_CHALLENGE_TIMEOUT", "soon"),
        ("INTAKE_CHALLENGE_TIMEOUT", "nan"),
        ("INTAKE_BODY_TIMEOUT", "inf"),
        ("INTAKE_WEBHOOK_ALLOW_PRIVATE", "maybe"),
        ("INTAKE_TRUSTED_PROXIES", "10.0.0.0/8, not-a-network"),
        ("INTAKE_TRUSTED_PROXIES", "10.0.0.0/33"),
        ("INTAKE_OUTBOX_RETENTION_DAYS", "-1"),
        ("INTAKE_DOWNLOAD_SECRET", "too-short"),
        ("INTAKE_DOWNLOAD_SECRET", "x" * 31),
        ("INTAKE_DOWNLOAD_TTL", "0"),
        ("INTAKE_DOWNLOAD_TTL", "-60"),
        ("INTAKE_DOWNLOAD_TTL", "a week"),
        ("INTAKE_DOWNLOAD_TTL", "inf"),
        ("INTAKE_DOWNLOAD_TTL", "1e300"),
        ("INTAKE_UPLOAD_TIMEOUT", "0"),
        ("INTAKE_UPLOAD_TIMEOUT", "nan"),
        ("INTAKE_UPLOAD_GRACE", "-1"),
        ("INTAKE_UPLOAD_GRACE", "an hour"),
    ],
)
def test_a_bad_value_raises_a_config_error_naming_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        Settings.from_env({name: value})


def test_a_short_download_secret_is_refused_without_being_quoted() -> None:
    secret = "hunter2-but-longer-yet-short"

    with pytest.raises(ConfigError, match="INTAKE_DOWNLOAD_SECRET") as refused:
        Settings.from_env({"INTAKE_DOWNLOAD_SECRET": secret})

    assert secret not in str(refused.value)
    assert "32 characters" in str(refused.value)


def test_a_download_secret_of_32_characters_is_accepted_and_kept_out_of_the_repr() -> None:
    settings = Settings.from_env({"INTAKE_DOWNLOAD_SECRET": "k" * 32})

    assert settings.download_secret == "k" * 32
    assert "k" * 32 not in repr(settings)
    assert "k" * 32 not in repr(Settings(download_secret="k" * 32))


def test_a_download_link_may_live_up_to_ten_years() -> None:
    ten_years = Settings.from_env({"INTAKE_DOWNLOAD_TTL": str(MAX_DOWNLOAD_TTL)})
    a_second = Settings.from_env({"INTAKE_DOWNLOAD_TTL": "1"})

    assert ten_years.download_ttl == MAX_DOWNLOAD_TTL >= 3650 * 86400
    assert a_second.download_ttl == 1.0
    with pytest.raises(ConfigError, match="INTAKE_DOWNLOAD_TTL"):
        Settings.from_env({"INTAKE_DOWNLOAD_TTL": str(MAX_DOWNLOAD_TTL + 1)})


@pytest.mark.parametrize(
    ("timeout", "grace"),
    [("3600", None), (None, "300"), ("600", "600"), ("900", "600")],
)
def test_the_upload_grace_must_outlast_the_upload_timeout(
    timeout: str | None, grace: str | None
) -> None:
    env = {
        name: value
        for name, value in (("INTAKE_UPLOAD_TIMEOUT", timeout), ("INTAKE_UPLOAD_GRACE", grace))
        if value is not None
    }

    with pytest.raises(ConfigError, match=r"INTAKE_UPLOAD_GRACE.*INTAKE_UPLOAD_TIMEOUT"):
        Settings.from_env(env)


def test_a_longer_upload_timeout_with_a_longer_grace_is_accepted() -> None:
    settings = Settings.from_env({"INTAKE_UPLOAD_TIMEOUT": "3600", "INTAKE_UPLOAD_GRACE": "7200"})

    assert (settings.upload_timeout, settings.upload_grace) == (3600.0, 7200.0)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "http://127.0.0.1:8000"),
        ({"INTAKE_HOST": "0.0.0.0", "INTAKE_PORT": "9000"}, "http://127.0.0.1:9000"),
        ({"INTAKE_HOST": "::"}, "http://[::1]:8000"),
        ({"INTAKE_HOST": "::1"}, "http://[::1]:8000"),
        ({"INTAKE_HOST": "forms.internal"}, "http://forms.internal:8000"),
        ({"INTAKE_BASE_URL": "https://forms.example.com/"}, "https://forms.example.com"),
        (
            {"INTAKE_BASE_URL": "https://example.com/intake", "INTAKE_HOST": "0.0.0.0"},
            "https://example.com/intake",
        ),
    ],
)
def test_the_public_base_url_is_the_base_url_else_the_served_address(
    env: dict[str, str], expected: str
) -> None:
    assert Settings.from_env(env).public_base_url == expected


@pytest.mark.parametrize(
    ("database_url", "blob_url"),
    [
        ("sqlite:///.intake/intake.db", os.path.join(".intake", "blobs")),
        ("sqlite:////srv/intake/data.db", "/srv/intake/blobs"),
        ("sqlite:///:memory:", None),
        ("postgresql://intake@db/intake", None),
    ],
)
def test_the_blob_store_defaults_to_a_folder_beside_a_sqlite_file(
    database_url: str, blob_url: str | None
) -> None:
    assert Settings.from_env({"INTAKE_DATABASE_URL": database_url}).blob_url == blob_url
    assert Settings(database_url=database_url).blob_url == blob_url


def test_the_largest_port_is_accepted() -> None:
    assert Settings.from_env({"INTAKE_PORT": "65535"}).port == 65535


def test_unrelated_variables_are_ignored() -> None:
    assert Settings.from_env({"PATH": "/bin", "INTAKE_UNKNOWN": "x"}) == Settings()


def test_a_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)
