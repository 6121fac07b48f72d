"""The real challenge path once, end to end: the service's own HttpChallengeVerifier,
built by the container, talking over a socket to a local siteverify server."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from intake.config import Settings
from intake.domain.model import Challenge, ChallengeProvider, EventType, SubmissionStatus
from tests.http.conftest import PEER, Seeded, ServiceFactory, assert_error
from tests.support.fake_provider import FAIL_SECRET, PASS_SECRET, SPENT_SECRET, FakeProvider

FIELDS = {"name": "Ada", "message": "Hello"}
TOKEN = "widget-token-7c1e"


@pytest.fixture
def provider() -> Iterator[FakeProvider]:
    with FakeProvider() as fake:
        yield fake


def _guarded(
    make_service: ServiceFactory, provider: FakeProvider, secret: str, timeout: float = 3.0
) -> Seeded:
    svc = make_service(
        Settings(verify_urls=provider.urls, challenge_timeout=timeout), real_challenge=True
    )
    seeded = Seeded(svc)
    svc.update_form(seeded.form.form_id, challenge=Challenge(ChallengeProvider.TURNSTILE, secret))
    return seeded


def test_a_token_the_provider_passes_is_accepted(
    make_service: ServiceFactory, provider: FakeProvider
) -> None:
    seeded = _guarded(make_service, provider, PASS_SECRET)

    response = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "cf-turnstile-response": TOKEN}
    )

    assert response.status_code == 201
    stored = seeded.svc.submission(response.json()["submission_id"])
    assert stored.status is SubmissionStatus.ACCEPTED
    (asked,) = provider.requests
    assert asked.provider is ChallengeProvider.TURNSTILE
    assert asked.form == {"secret": PASS_SECRET, "response": TOKEN, "remoteip": PEER}


def test_a_json_clients_header_token_is_verified_the_same_way(
    make_service: ServiceFactory, provider: FakeProvider
) -> None:
    seeded = _guarded(make_service, provider, PASS_SECRET)

    response = seeded.svc.public(
        seeded.form.public_form_key, json=FIELDS, headers={"x-challenge-token": TOKEN}
    )

    assert response.status_code == 201
    assert provider.requests[0].form["response"] == TOKEN


@pytest.mark.parametrize("secret", [FAIL_SECRET, SPENT_SECRET], ids=["rejected", "spent"])
def test_a_token_the_provider_refuses_is_challenge_failed(
    make_service: ServiceFactory, provider: FakeProvider, secret: str
) -> None:
    seeded = _guarded(make_service, provider, secret)

    response = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "cf-turnstile-response": TOKEN}
    )

    assert_error(response, "challenge_failed")
    assert seeded.svc.stored() == (0, 0)


def test_a_missing_token_is_refused_without_asking_the_provider(
    make_service: ServiceFactory, provider: FakeProvider
) -> None:
    seeded = _guarded(make_service, provider, PASS_SECRET)

    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)

    assert_error(response, "challenge_failed")
    assert provider.requests == []


def test_a_retry_after_the_token_was_spent_still_gets_the_original_answer(
    make_service: ServiceFactory, provider: FakeProvider
) -> None:
    seeded = _guarded(make_service, provider, PASS_SECRET)
    first = seeded.svc.public(
        seeded.form.public_form_key,
        data={**FIELDS, "cf-turnstile-response": TOKEN},
        idempotency_key="retry-1",
    )
    # From now on the provider answers that this token was already spent.
    seeded.svc.update_form(
        seeded.form.form_id, challenge=Challenge(ChallengeProvider.TURNSTILE, SPENT_SECRET)
    )

    retry = seeded.svc.public(
        seeded.form.public_form_key,
        data={**FIELDS, "cf-turnstile-response": TOKEN},
        idempotency_key="retry-1",
    )
    fresh = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "cf-turnstile-response": TOKEN}
    )

    assert first.status_code == 201
    assert retry.status_code == 200
    assert retry.json() == first.json()
    assert retry.headers["idempotent-replayed"] == "true"
    assert_error(fresh, "challenge_failed")  # without the key, the spent token is refused
    assert len(provider.requests) == 2  # the replay did not ask the provider
    assert seeded.svc.stored() == (1, 1)


def _assert_kept_unverified(seeded: Seeded, response: httpx2.Response) -> None:
    assert response.status_code == 201, response.text
    stored = seeded.svc.submission(response.json()["submission_id"])
    assert stored.status is SubmissionStatus.UNVERIFIED
    (row,) = seeded.svc.outbox(stored.submission_id)
    assert row.event.event_type is EventType.FLAGGED
    assert seeded.svc.used(seeded.workspace.workspace_id) == 0


def test_a_provider_that_is_down_keeps_the_submission_unverified(
    make_service: ServiceFactory, provider: FakeProvider
) -> None:
    seeded = _guarded(make_service, provider, PASS_SECRET)
    provider.stop()

    response = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "cf-turnstile-response": TOKEN}
    )

    _assert_kept_unverified(seeded, response)


def test_a_provider_error_keeps_the_submission_unverified(
    make_service: ServiceFactory, provider: FakeProvider
) -> None:
    seeded = _guarded(make_service, provider, PASS_SECRET)
    provider.status = 502

    response = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "cf-turnstile-response": TOKEN}
    )

    _assert_kept_unverified(seeded, response)


def test_a_provider_too_slow_to_answer_keeps_the_submission_unverified(
    make_service: ServiceFactory, provider: FakeProvider
) -> None:
    seeded = _guarded(make_service, provider, PASS_SECRET, timeout=0.2)
    provider.delay = 5.0  # the provider would answer; the service stops waiting first

    response = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "cf-turnstile-response": TOKEN}
    )

    _assert_kept_unverified(seeded, response)
