"""Shared test setup: the async backend, Hypothesis profiles, real-service gating, every
test's time limit, and the local destinations (webhook receiver, SMTP server) every
directory may ask for."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, settings

# Fixtures shared by every directory: the local webhook receiver and SMTP server.
from tests.support.destination_servers import chat_apps, receiver, smtp  # noqa: F401

# Hooks: each test's time limit, and the watchdog behind it.
from tests.support.time_limits import (  # noqa: F401
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_setup,
    pytest_timeout_cancel_timer,
    pytest_timeout_set_timer,
    pytest_unconfigure,
)

settings.register_profile(
    "dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def services_required() -> bool:
    """CI sets INTAKE_REQUIRE_SERVICES=1: then a missing server fails instead of skipping."""
    return os.environ.get("INTAKE_REQUIRE_SERVICES") == "1"


def unavailable(reason: str) -> None:
    """Skip with the reason, or fail when the services are required."""
    if services_required():
        pytest.fail(f"required service unavailable: {reason}")
    pytest.skip(reason)


@contextmanager
def new_postgres_database() -> Iterator[str]:
    """A new empty database of its own on the test server (INTAKE_TEST_DATABASE_URL), as
    a URL, dropped after whatever a test left open; skips, or fails when the services
    are required, while the server does not answer."""
    # Imported here: the server's helpers live with the contract suites, which import
    # this module, and only the tests that use PostgreSQL load its driver.
    import psycopg

    from tests.contract.conftest import (
        admin_url,
        create_database,
        database_url,
        drop_database,
    )

    admin = admin_url()
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as error:
        unavailable(f"PostgreSQL is not reachable: {error}")
    name = create_database(admin)
    try:
        yield database_url(admin, name)
    finally:
        drop_database(admin, name)
