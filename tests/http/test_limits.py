"""Rate limits and the monthly quota over HTTP (spec part 8, decisions.md "Rate limits"
and "Quota"). Time moves with the fake clock; nothing sleeps."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime

import httpx2
import pytest

from intake.config import Settings
from intake.domain.model import Plan
from intake.domain.ratelimit import RateLimits, RateRule
from intake.service.admin import WorkspaceChanges
from tests.http.conftest import (
    Seeded,
    ServiceFactory,
    assert_error,
)

# Also on PostgreSQL (tests/http/conftest.py): the limits in Redis (the production pair)
# and the quota's shards.
pytestmark = pytest.mark.postgres_smoke

FIELDS = {"name": "Ada", "message": "Hello"}
SPAM = {
    "name": "Ada",
    "message": "Buy viagra now! Click here: http://a.example http://b.example http://c.example",
}


def _retry_after(response: httpx2.Response) -> int:
    raw = response.headers["retry-after"]
    assert raw.isdigit(), raw
    value = int(raw)
    assert value >= 1
    return value


def _post(seeded: Seeded, peer: str | None = None) -> httpx2.Response:
    return seeded.svc.public(seeded.form.public_form_key, data=FIELDS, peer=peer)


# -- rate_limited: the public endpoint -------------------------------------------------


def test_the_sixth_request_in_thirty_seconds_from_one_ip_is_rate_limited(seeded: Seeded) -> None:
    admitted = [_post(seeded).status_code for _ in range(5)]

    refused = _post(seeded)

    assert admitted == [201] * 5
    assert_error(refused, "rate_limited")
    assert _retry_after(refused) == 30
    assert seeded.svc.stored() == (5, 5)


def test_retry_after_is_truthful_neither_early_nor_late(seeded: Seeded) -> None:
    for _ in range(5):
        assert _post(seeded).status_code == 201
        seeded.svc.clock.advance(4)  # hits at 0, 4, 8, 12, 16; now 20
    refused = _post(seeded)
    wait = _retry_after(refused)
    assert wait == 10  # the hit at 0 leaves the window at 30

    seeded.svc.clock.advance(wait - 1)
    early = _post(seeded)
    assert_error(early, "rate_limited")
    assert _retry_after(early) == 1

    seeded.svc.clock.advance(1)
    assert _post(seeded).status_code == 201


def test_refused_requests_do_not_count(seeded: Seeded) -> None:
    for _ in range(5):
        _post(seeded)
    first = _post(seeded)
    wait = _retry_after(first)
    for _ in range(20):
        seeded.svc.clock.advance(0.5)
        assert _post(seeded).status_code == 429

    seeded.svc.clock.advance(wait - 10)

    assert _post(seeded).status_code == 201


def test_different_ips_are_limited_independently(seeded: Seeded) -> None:
    for _ in range(5):
        _post(seeded, peer="198.51.100.1")
    assert _post(seeded, peer="198.51.100.1").status_code == 429

    other = [_post(seeded, peer="198.51.100.2").status_code for _ in range(5)]

    assert other == [201] * 5


def test_the_same_ip_is_limited_per_form(seeded: Seeded) -> None:
    second = seeded.svc.form(seeded.workspace.workspace_id)
    for _ in range(5):
        _post(seeded)
    assert _post(seeded).status_code == 429

    response = seeded.svc.public(second.public_form_key, data=FIELDS)

    assert response.status_code == 201


def test_thirty_requests_in_ten_minutes_is_the_sustained_limit(seeded: Seeded) -> None:
    for _ in range(30):
        assert _post(seeded).status_code == 201
        seeded.svc.clock.advance(6)  # 5 per 30 s: under the burst limit
    refused = _post(seeded)  # at 180 s; the first hit leaves the window at 600 s

    assert_error(refused, "rate_limited")
    assert _retry_after(refused) == 420
    seeded.svc.clock.advance(420)
    assert _post(seeded).status_code == 201


def test_the_per_form_ceiling_holds_across_many_ips(make_service: ServiceFactory) -> None:
    svc = make_service(Settings(rate_limits=RateLimits(public_form=RateRule(3, 600))))
    seeded = Seeded(svc)
    admitted = [_post(seeded, peer=f"198.51.100.{i}").status_code for i in range(3)]

    refused = _post(seeded, peer="198.51.100.99")

    assert admitted == [201] * 3
    assert_error(refused, "rate_limited")
    assert _retry_after(refused) == 600
    svc.clock.advance(600)
    assert _post(seeded, peer="198.51.100.100").status_code == 201


def test_the_rate_limit_is_evaluated_before_the_quota(make_service: ServiceFactory) -> None:
    svc = make_service()
    seeded = Seeded(svc)
    svc.run(
        svc.services.workspaces.update,
        seeded.workspace.workspace_id,
        WorkspaceChanges(monthly_limit=0),
    )

    first = [_post(seeded) for _ in range(5)]
    sixth = _post(seeded)

    for response in first:
        assert_error(response, "quota_exceeded")
    assert_error(sixth, "rate_limited")


def test_requests_refused_later_still_count_against_the_rate(seeded: Seeded) -> None:
    for _ in range(5):
        response = seeded.svc.public(
            seeded.form.public_form_key, content=b"[]", headers={"content-type": "text/plain"}
        )
        assert response.status_code == 415

    assert_error(_post(seeded), "rate_limited")


def test_the_client_ip_is_the_peer_and_not_a_header_it_sends(seeded: Seeded) -> None:
    for i in range(5):
        seeded.svc.public(
            seeded.form.public_form_key, data=FIELDS, headers={"x-forwarded-for": f"10.0.0.{i}"}
        )

    response = seeded.svc.public(
        seeded.form.public_form_key, data=FIELDS, headers={"x-forwarded-for": "10.0.0.99"}
    )

    assert_error(response, "rate_limited")


def test_a_trusted_proxys_forwarded_address_is_the_client(make_service: ServiceFactory) -> None:
    svc = make_service(Settings(trusted_proxies=(ipaddress.ip_network("203.0.113.0/24"),)))
    seeded = Seeded(svc)
    for _ in range(5):
        _forwarded(seeded, "198.51.100.7")
    assert_error(_forwarded(seeded, "198.51.100.7"), "rate_limited")

    other = _forwarded(seeded, "198.51.100.8")
    spoofed = _forwarded(seeded, "1.2.3.4, 198.51.100.7")

    assert other.status_code == 201
    assert_error(spoofed, "rate_limited")  # what the client prepended does not count


def _forwarded(seeded: Seeded, chain: str) -> httpx2.Response:
    return seeded.svc.public(
        seeded.form.public_form_key, data=FIELDS, headers={"x-forwarded-for": chain}
    )


# -- rate_limited: the server endpoint -------------------------------------------------


def _server(seeded: Seeded, secret: str | None = None) -> httpx2.Response:
    return seeded.svc.server(seeded.form.form_id, secret or seeded.key.secret, data=FIELDS)


def test_the_server_endpoint_allows_more_than_the_public_burst(seeded: Seeded) -> None:
    statuses = [_server(seeded).status_code for _ in range(10)]

    assert statuses == [201] * 10


def test_the_server_endpoint_is_limited_per_key(make_service: ServiceFactory) -> None:
    svc = make_service(
        Settings(rate_limits=RateLimits(server_burst=RateRule(2, 30), public_form=RateRule(1, 600)))
    )
    seeded = Seeded(svc)
    other_key = svc.api_key(seeded.workspace.workspace_id)

    admitted = [_server(seeded).status_code for _ in range(2)]
    refused = _server(seeded)
    with_other_key = _server(seeded, other_key.secret)

    assert admitted == [201, 201]  # the public per-form ceiling of 1 does not apply
    assert_error(refused, "rate_limited")
    assert _retry_after(refused) == 30
    assert with_other_key.status_code == 201


def test_the_server_limit_is_not_shared_with_the_public_one(seeded: Seeded) -> None:
    for _ in range(5):
        _post(seeded)
    assert _post(seeded).status_code == 429

    assert _server(seeded).status_code == 201


# -- quota_exceeded --------------------------------------------------------------------


def _limited(make_service: ServiceFactory, plan: Plan, monthly_limit: int | None) -> Seeded:
    svc = make_service()
    seeded = Seeded(svc)
    svc.run(
        svc.services.workspaces.update,
        seeded.workspace.workspace_id,
        WorkspaceChanges(plan=plan, monthly_limit=monthly_limit),
    )
    return seeded


def _accept_many(seeded: Seeded, count: int) -> list[int]:
    statuses = []
    for _ in range(count):
        statuses.append(_server(seeded).status_code)
        seeded.svc.clock.advance(1)
    return statuses


def test_a_workspace_monthly_limit_is_its_ceiling(make_service: ServiceFactory) -> None:
    seeded = _limited(make_service, Plan.FREE, 2)

    admitted = _accept_many(seeded, 2)
    refused = _post(seeded)

    assert admitted == [201, 201]
    assert_error(refused, "quota_exceeded")
    assert seeded.svc.stored() == (2, 2)
    assert seeded.svc.used(seeded.workspace.workspace_id) == 2


def test_the_free_plan_allows_fifty_a_month(make_service: ServiceFactory) -> None:
    seeded = _limited(make_service, Plan.FREE, None)

    admitted = _accept_many(seeded, 50)
    refused = _server(seeded)

    assert admitted == [201] * 50
    assert_error(refused, "quota_exceeded")


def test_a_paid_plan_with_overage_allows_twice_its_limit(make_service: ServiceFactory) -> None:
    seeded = _limited(make_service, Plan.STARTER, 2)

    admitted = _accept_many(seeded, 4)
    refused = _server(seeded)

    assert admitted == [201] * 4
    assert_error(refused, "quota_exceeded")


def test_spam_does_not_use_the_quota(make_service: ServiceFactory) -> None:
    seeded = _limited(make_service, Plan.FREE, 1)

    spam = seeded.svc.public(seeded.form.public_form_key, data=SPAM)
    accepted = _post(seeded)
    refused = _post(seeded)

    assert spam.status_code == 201
    assert accepted.status_code == 201
    assert_error(refused, "quota_exceeded")
    assert seeded.svc.used(seeded.workspace.workspace_id) == 1


def test_a_full_quota_still_keeps_spam_for_review(make_service: ServiceFactory) -> None:
    seeded = _limited(make_service, Plan.FREE, 0)

    spam = seeded.svc.public(seeded.form.public_form_key, data=SPAM)

    assert spam.status_code == 201
    assert seeded.svc.submission(spam.json()["submission_id"]).status.value == "spam"


def test_the_quota_is_per_calendar_month(make_service: ServiceFactory) -> None:
    seeded = _limited(make_service, Plan.FREE, 1)
    seeded.svc.clock.set(datetime(2026, 1, 31, 23, 59, 59, tzinfo=UTC))
    assert _post(seeded).status_code == 201
    assert_error(_post(seeded, peer="198.51.100.1"), "quota_exceeded")

    seeded.svc.clock.set(datetime(2026, 2, 1, 0, 0, 1, tzinfo=UTC))

    assert _post(seeded, peer="198.51.100.2").status_code == 201


def test_the_quota_is_shared_by_the_workspaces_forms(make_service: ServiceFactory) -> None:
    seeded = _limited(make_service, Plan.FREE, 1)
    second = seeded.svc.form(seeded.workspace.workspace_id)
    assert _post(seeded).status_code == 201

    response = seeded.svc.public(second.public_form_key, data=FIELDS)

    assert_error(response, "quota_exceeded")
