"""Shared test setup: the async backend, Hypothesis profiles, real-service gating, the
test Redis, every test's time limit, and the local destinations (webhook receiver, SMTP
server) every directory may ask for."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, settings

from tests.support import time_limits

# Fixtures shared by every directory: the local webhook receiver and SMTP server.
from tests.support.destination_servers import chat_apps, receiver, smtp  # noqa: F401

# The option that records what each file's tests take (tests/support/file_order.py).
from tests.support.file_order import LongestFilesFirst, pytest_addoption  # noqa: F401
from tests.support.postgres_template import create_migrated_database, drop_templates

# Hooks: each test's time limit, and the watchdog behind it.
from tests.support.time_limits import (  # noqa: F401
    pytest_collection_modifyitems,
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
# The inner loop (`make test-fast`) draws fewer examples: a quick look, where `make test`
# and CI search harder.
settings.register_profile(
    "fast", max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
PROFILE = os.environ.get("INTAKE_TEST_HYPOTHESIS_PROFILE") or (
    "ci" if os.environ.get("CI") else "dev"
)
settings.load_profile(PROFILE)


def examples(count: int) -> int:
    """A test's own number of examples, where it asks for more than the profile's: cut to a
    tenth in the `fast` profile, as the profile's default is (15 of ci's 150)."""
    return max(count // 10, 1) if PROFILE == "fast" else count


def pytest_configure(config: pytest.Config) -> None:
    time_limits.pytest_configure(config)
    # xdist's workers are dealt the longest test files first (tests/support/file_order.py).
    config.pluginmanager.register(LongestFilesFirst(config), "intake-file-order")


def pytest_collection_finish(session: pytest.Session) -> None:
    # What the imports and the collection made lives as long as the process: frozen, the
    # cyclic collector no longer walks it in each full collection (a third of the time it
    # spent in a worker).
    gc.freeze()


def pytest_sessionfinish(session: pytest.Session) -> None:
    drop_templates()  # the migrated databases this process copied from


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


_Module = TypeVar("_Module")


def built(module: _Module | None, stem: str) -> _Module:
    """A native accelerator (intake.domain.native.<stem>) the install built, imported by
    the caller as None when it did not: skips then, or fails when the services are
    required, as in CI, whose machine has a C compiler."""
    if module is None:
        reason = f"intake.domain.native.{stem} is not built (no C compiler at install)"
        if services_required():
            pytest.fail(reason)
        pytest.skip(reason)
    return module


@contextmanager
def new_postgres_database(*, migrated: bool = False) -> Iterator[str]:
    """A new empty database of its own on the test server (INTAKE_TEST_DATABASE_URL), as
    a URL, dropped after whatever a test left open; skips, or fails when the services
    are required, while the server does not answer. `migrated`: at the latest schema,
    copied from a migrated template (tests/support/postgres_template.py)."""
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
    name = create_migrated_database(admin) if migrated else create_database(admin)
    try:
        yield database_url(admin, name)
    finally:
        drop_database(admin, name)


# -- Redis --------------------------------------------------------------------------------

TEST_REDIS_URL = "INTAKE_TEST_REDIS_URL"


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The Redis the tests use. Unless INTAKE_TEST_REDIS_URL names one, each test process
    starts a redis-server of its own on a free port (tests/support/instances.py) and
    stops it at the end. A named server is shared with whoever else uses it: no test
    empties it; each writes only keys of its own (a random prefix, or the windows of
    forms it made, which expire with their window) and deletes what it can. Skips, or
    fails under INTAKE_REQUIRE_SERVICES=1, when there is neither."""
    named = os.environ.get(TEST_REDIS_URL)
    if not named:
        # Imported here: the helpers import this module, and only Redis tests need them.
        from tests.support.instances import private_redis

        with private_redis() as server:
            yield server.url
        return
    import redis

    try:
        with redis.Redis.from_url(named, socket_connect_timeout=5, socket_timeout=5) as client:
            client.ping()
    except (redis.RedisError, OSError) as error:
        unavailable(f"Redis is not reachable at {TEST_REDIS_URL}: {error}")
    yield named
