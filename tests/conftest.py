"""Shared test setup: the async backend, Hypothesis profiles, and real-service gating."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

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
