"""A Redis that is down as the service starts: said at once in the log, shown by /readyz
(still ready: submissions are accepted, limited per process) and by the
`intake_rate_limiter_fallback` gauge, which falls back to 0 once Redis answers again.

The app is built from its settings with no rate limiter given, as `intake serve` builds
it; its Redis is a private redis-server this module starts and stops."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.adapters.memory import FakeChallengeVerifier, InMemoryStore
from intake.config import Settings
from intake.domain.ratelimit import RateLimits, RateRule
from intake.entrypoints.http import create_app
from intake.serve_runtime import ServeRuntime
from tests.support.instances import private_redis
from tests.support.processes import free_port

TOKEN = "metrics-token-of-the-fallback-tests-0001"
OPERATOR = {"authorization": f"Bearer {TOKEN}"}
GAUGE = "intake_rate_limiter_fallback"
FIELDS = {"name": "Ada"}
RECOVERY_TIMEOUT = 30.0  # seconds for a probe of the returned Redis to be made and answered


@contextmanager
def _service(redis_url: str | None) -> Iterator[TestClient]:
    settings = Settings(
        database_url="sqlite:///:memory:",
        redis_url=redis_url,
        metrics_token=TOKEN,
        # Room for every submission of a test from the one test client.
        rate_limits=RateLimits(
            public_burst=RateRule(1000, 30), public_sustained=RateRule(1000, 600)
        ),
    )
    app = create_app(
        settings,
        store=InMemoryStore(),
        blobs=InMemoryBlobStore(),
        challenge=FakeChallengeVerifier(),
    )
    with TestClient(app) as client:
        yield client


def _gauge(client: TestClient) -> float:
    response = client.get("/metrics", headers=OPERATOR)
    assert response.status_code == 200, response.text
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name == GAUGE:
                return sample.value
    raise AssertionError(f"no {GAUGE} in:\n{response.text}")


def _readiness(client: TestClient) -> dict[str, object]:
    response: httpx2.Response = client.get("/readyz")
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


def _form_key(client: TestClient) -> str:
    portal = client.portal
    assert portal is not None
    runtime: ServeRuntime = client.app.state.runtime  # type: ignore[attr-defined]
    workspace = portal.call(runtime.services.workspaces.create, "Acme")
    form = portal.call(runtime.services.forms.create, workspace.workspace_id)
    key: str = form.public_form_key
    return key


def test_a_redis_down_at_start_is_logged_at_once_and_shown_before_any_submission(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="intake")
    closed = f"redis://127.0.0.1:{free_port()}/0"

    with _service(closed) as client:
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        readiness = _readiness(client)
        gauge = _gauge(client)

    (warning,) = warnings
    assert warning.startswith("Redis unreachable: rate limits are held per process")
    assert readiness == {"ok": True, "rate_limits": "fallback"}
    assert gauge == 1


def test_without_redis_the_windows_are_per_process_by_design_and_no_fallback() -> None:
    with _service(None) as client:
        assert _readiness(client) == {"ok": True, "rate_limits": "process"}
        assert _gauge(client) == 0


@pytest.mark.services
def test_the_gauge_and_readiness_follow_redis_as_it_goes_and_returns() -> None:
    with private_redis() as redis, _service(redis.url) as client:
        key = _form_key(client)
        assert _readiness(client) == {"ok": True, "rate_limits": "shared"}
        assert _gauge(client) == 0

        redis.kill()
        assert client.post(f"/f/{key}", data=FIELDS).status_code == 201  # the fallback's
        assert _readiness(client) == {"ok": True, "rate_limits": "fallback"}
        assert _gauge(client) == 1

        redis.start()  # again, on the same port
        _submit_until_shared(client, key)
        assert _gauge(client) == 0


def _submit_until_shared(client: TestClient, key: str) -> None:
    """Submissions, one a while, until one of them finds Redis back (the limiter tries it
    again at most once a second)."""
    deadline = time.monotonic() + RECOVERY_TIMEOUT
    while _readiness(client)["rate_limits"] != "shared":
        assert time.monotonic() < deadline, "the limiter never went back to Redis"
        assert client.post(f"/f/{key}", data=FIELDS).status_code == 201
        time.sleep(0.2)
