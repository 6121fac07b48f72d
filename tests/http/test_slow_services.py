"""On a loaded machine a server answers late, not never: the production pair of the
harness (tests/http/conftest.py) waits for Redis, and for a pooled PostgreSQL
connection, as long as a test may take, so that the suite does not fail on a 503 that
only the machine's load caused. Redis is the one a test can slow down at will."""

from __future__ import annotations

import os

import pytest
import redis

from tests.conftest import TEST_REDIS_URL
from tests.http.conftest import BACKENDS, Backend, Seeded

FIELDS = {"name": "Ada", "email": "ada@example.com", "message": "Hello"}
PAUSE_MS = 3000  # longer than the service's own Redis timeout, far below the harness's


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.services)])
def backend(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[request.param](request)


def test_a_redis_that_answers_late_delays_the_first_request_without_failing_it(
    seeded: Seeded, redis_url: str
) -> None:
    if os.environ.get(TEST_REDIS_URL):
        pytest.skip(f"{TEST_REDIS_URL} names a shared server: pausing it would stall others")
    with redis.Redis.from_url(redis_url, socket_timeout=10) as control:
        # Every client's next command waits: as a Redis starved of CPU answers.
        control.execute_command("CLIENT", "PAUSE", PAUSE_MS, "ALL")

    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)

    assert response.status_code == 201, response.text
