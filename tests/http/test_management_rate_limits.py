"""The management API's rate limits, per API key: 100 requests in any 10 seconds and
3,000 in any 10 minutes (management-api.md), refused with 429 rate_limited and a truthful
Retry-After. Counted by the runtime's limiter: in-process on memory and SQLite, Redis on
PostgreSQL, with windows of their own, apart from the submission endpoint's."""

from __future__ import annotations

import httpx2
import pytest

from intake.config import Settings
from intake.domain.model import Scope
from intake.domain.ratelimit import RateLimits, RateRule
from intake.service.admin import CreatedKey
from tests.http.conftest import (
    Seeded,
    ServiceFactory,
    assert_error,
    assert_management_error,
)

BURST = 100  # in any 10 s
BURST_SECONDS = 10
SUSTAINED = 3_000  # in any 10 min
SUSTAINED_SECONDS = 600
READ_PATH = "/v1/forms"

# Each test sends a burst's worth of requests: `make test` runs them, the inner loop not.
# Also on PostgreSQL (tests/http/conftest.py): the management API's limits in Redis.
pytestmark = [pytest.mark.slow, pytest.mark.postgres_smoke]


@pytest.fixture
def reader(seeded: Seeded) -> CreatedKey:
    return seeded.svc.run(
        seeded.svc.services.keys.create,
        seeded.workspace.workspace_id,
        scopes=frozenset({Scope.SUBMIT, Scope.READ}),
    )


def read(seeded: Seeded, key: CreatedKey) -> httpx2.Response:
    return seeded.svc.client.get(READ_PATH, headers={"authorization": f"Bearer {key.secret}"})


def spend(seeded: Seeded, key: CreatedKey, count: int) -> None:
    for number in range(count):
        response = read(seeded, key)
        assert response.status_code == 200, f"request {number + 1}: {response.text}"


def assert_rate_limited(response: httpx2.Response, retry_after: int) -> None:
    assert_management_error(response, "rate_limited")
    assert response.headers["retry-after"] == str(retry_after)


def test_the_101st_request_within_10_seconds_is_rate_limited(
    seeded: Seeded, reader: CreatedKey
) -> None:
    spend(seeded, reader, BURST)

    assert_rate_limited(read(seeded, reader), BURST_SECONDS)


def test_retry_after_is_truthful(seeded: Seeded, reader: CreatedKey) -> None:
    spend(seeded, reader, BURST // 2)
    seeded.svc.clock.advance(4)
    spend(seeded, reader, BURST // 2)

    # The oldest hits leave the window 6 s from now: not a moment before.
    assert_rate_limited(read(seeded, reader), 6)
    seeded.svc.clock.advance(5.5)
    assert_rate_limited(read(seeded, reader), 1)
    seeded.svc.clock.advance(0.5)
    assert read(seeded, reader).status_code == 200


def test_the_windows_are_per_key(seeded: Seeded, reader: CreatedKey) -> None:
    other = seeded.svc.run(
        seeded.svc.services.keys.create,
        seeded.workspace.workspace_id,
        scopes=frozenset({Scope.READ}),
    )
    spend(seeded, reader, BURST)
    assert_rate_limited(read(seeded, reader), BURST_SECONDS)

    assert read(seeded, other).status_code == 200


def test_a_refused_request_is_not_counted(seeded: Seeded, reader: CreatedKey) -> None:
    spend(seeded, reader, BURST)
    for _ in range(5):
        assert_rate_limited(read(seeded, reader), BURST_SECONDS)

    seeded.svc.clock.advance(BURST_SECONDS)

    spend(seeded, reader, BURST)


def test_the_management_api_does_not_spend_the_submission_endpoints_limits(
    seeded: Seeded, reader: CreatedKey
) -> None:
    spend(seeded, reader, BURST)
    assert_rate_limited(read(seeded, reader), BURST_SECONDS)

    submitted = seeded.svc.server(seeded.form.form_id, reader.secret, data={"message": "hi"})

    assert submitted.status_code == 201, submitted.text


def test_submissions_do_not_spend_the_management_apis_limits(
    seeded: Seeded, reader: CreatedKey
) -> None:
    # The server endpoint's burst is 50 per 30 s and per form: spent in full.
    for number in range(50):
        submitted = seeded.svc.server(
            seeded.form.form_id, reader.secret, data={"message": f"hi {number}"}
        )
        assert submitted.status_code == 201, submitted.text
    assert_error(
        seeded.svc.server(seeded.form.form_id, reader.secret, data={"message": "more"}),
        "rate_limited",
    )

    spend(seeded, reader, BURST)


def test_the_contracts_figures_are_the_defaults() -> None:
    limits = Settings().rate_limits

    assert limits.management_burst == RateRule(BURST, BURST_SECONDS)
    assert limits.management_sustained == RateRule(SUSTAINED, SUSTAINED_SECONDS)


def test_the_long_window_refuses_what_the_short_one_admits(make_service: ServiceFactory) -> None:
    # 3,000 requests take minutes over HTTP: the same two windows, with smaller figures,
    # show the long one counted and refusing on its own.
    burst, sustained, window = 10, 30, 60
    limits = RateLimits(
        management_burst=RateRule(burst, BURST_SECONDS),
        management_sustained=RateRule(sustained, window),
    )
    seeded = Seeded(make_service(Settings(rate_limits=limits)))
    key = seeded.svc.run(
        seeded.svc.services.keys.create,
        seeded.workspace.workspace_id,
        scopes=frozenset({Scope.READ}),
    )
    rounds = sustained // burst
    for _ in range(rounds):
        spend(seeded, key, burst)
        seeded.svc.clock.advance(BURST_SECONDS)

    elapsed = rounds * BURST_SECONDS
    assert_rate_limited(read(seeded, key), window - elapsed)
    seeded.svc.clock.advance(window - elapsed - 1)
    assert_rate_limited(read(seeded, key), 1)
    seeded.svc.clock.advance(1)
    assert read(seeded, key).status_code == 200


def test_a_refusal_speaks_of_requests_not_submissions(make_service: ServiceFactory) -> None:
    limits = RateLimits(management_burst=RateRule(1, BURST_SECONDS))
    seeded = Seeded(make_service(Settings(rate_limits=limits)))
    key = seeded.svc.run(
        seeded.svc.services.keys.create,
        seeded.workspace.workspace_id,
        scopes=frozenset({Scope.READ}),
    )
    spend(seeded, key, 1)

    refused = read(seeded, key)

    body = assert_management_error(refused, "rate_limited")
    assert "submission" not in body["error"]["message"].lower()
