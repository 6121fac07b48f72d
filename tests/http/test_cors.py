"""CORS on the public endpoint (decisions.md "Browsers"): every answer echoes the Origin,
and the allow-list is enforced by the 403, not by CORS."""

from __future__ import annotations

import httpx2
import pytest

from intake.config import Settings
from intake.domain.model import Challenge, ChallengeProvider, FormMode
from intake.domain.ratelimit import RateLimits, RateRule
from intake.service.admin import WorkspaceChanges
from tests.http.conftest import Seeded, ServiceFactory, assert_error

FIELDS = {"name": "Ada", "message": "Hello"}
ORIGIN = "https://page.example"


def _assert_cors(response: httpx2.Response, origin: str = ORIGIN) -> None:
    assert response.headers["access-control-allow-origin"] == origin
    exposed = {
        h.strip().lower() for h in response.headers["access-control-expose-headers"].split(",")
    }
    assert {"retry-after", "x-request-id"} <= exposed
    assert "access-control-allow-credentials" not in response.headers
    assert "origin" in response.headers["vary"].lower()


@pytest.mark.parametrize("origin", [ORIGIN, "https://anything.example:8443", "null"])
def test_a_preflight_is_answered_for_any_origin(seeded: Seeded, origin: str) -> None:
    response = seeded.svc.client.options(
        f"/f/{seeded.form.public_form_key}",
        headers={
            "origin": origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type, idempotency-key, x-challenge-token",
        },
    )

    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == origin
    assert "POST" in response.headers["access-control-allow-methods"]
    allowed = {
        h.strip().lower() for h in response.headers["access-control-allow-headers"].split(",")
    }
    assert {"content-type", "idempotency-key", "x-challenge-token"} <= allowed
    assert response.headers["x-request-id"]


def test_a_preflight_for_an_unknown_key_is_answered_too(seeded: Seeded) -> None:
    response = seeded.svc.client.options("/f/no-such-key", headers={"origin": ORIGIN})

    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == ORIGIN


def test_a_success_echoes_the_origin(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, origin=ORIGIN)

    assert response.status_code == 201
    _assert_cors(response)


def test_a_replay_echoes_the_origin_and_exposes_the_replay_header(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    seeded.svc.public(key, data=FIELDS, origin=ORIGIN, idempotency_key="c-1")

    replay = seeded.svc.public(key, data=FIELDS, origin=ORIGIN, idempotency_key="c-1")

    assert replay.status_code == 200
    _assert_cors(replay)


def test_a_refused_origin_can_read_why(seeded: Seeded) -> None:
    seeded.svc.update_form(seeded.form.form_id, allowed_origins=["https://shop.example"])

    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, origin=ORIGIN)

    assert_error(response, "origin_not_allowed")
    _assert_cors(response)


def test_an_unknown_key_echoes_the_origin(seeded: Seeded) -> None:
    response = seeded.svc.public("no-such-key", data=FIELDS, origin=ORIGIN)

    assert_error(response, "form_not_found")
    _assert_cors(response)


def test_a_rate_limited_answer_echoes_the_origin_and_exposes_retry_after(
    seeded: Seeded,
) -> None:
    for _ in range(5):
        seeded.svc.public(seeded.form.public_form_key, data=FIELDS, origin=ORIGIN)

    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, origin=ORIGIN)

    assert_error(response, "rate_limited")
    _assert_cors(response)


@pytest.mark.parametrize(
    ("code", "content", "content_type"),
    [
        ("malformed_request", b"{", "application/json"),
        ("unsupported_content_type", b"x", "text/plain"),
        ("payload_too_large", b"m=" + b"x" * 21_000, "application/x-www-form-urlencoded"),
        ("validation_failed", b"email=nope", "application/x-www-form-urlencoded"),
    ],
)
def test_every_body_error_echoes_the_origin(
    seeded: Seeded, code: str, content: bytes, content_type: str
) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key,
        content=content,
        headers={"content-type": content_type},
        origin=ORIGIN,
    )

    assert_error(response, code)
    _assert_cors(response)


def test_every_access_error_echoes_the_origin(make_service: ServiceFactory) -> None:
    svc = make_service(Settings(rate_limits=RateLimits(public_form=RateRule(1000, 600))))
    seeded = Seeded(svc)
    ws = seeded.workspace.workspace_id
    paused = svc.form(ws)
    svc.update_form(paused.form_id, enabled=False)
    protected = svc.form(ws, mode=FormMode.PROTECTED)
    guarded = svc.form(ws, challenge=Challenge(ChallengeProvider.TURNSTILE, "s"))
    svc.fail_commits(1)

    answers = {
        "form_disabled": svc.public(paused.public_form_key, data=FIELDS, origin=ORIGIN),
        "unauthorized": svc.public(protected.public_form_key, data=FIELDS, origin=ORIGIN),
        "challenge_failed": svc.public(guarded.public_form_key, data=FIELDS, origin=ORIGIN),
        "service_unavailable": svc.public(seeded.form.public_form_key, data=FIELDS, origin=ORIGIN),
    }

    for code, response in answers.items():
        assert_error(response, code)
        _assert_cors(response)


def test_quota_and_conflict_answers_echo_the_origin(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    seeded.svc.public(key, data=FIELDS, idempotency_key="c-2")
    conflict = seeded.svc.public(key, data={"x": "y"}, origin=ORIGIN, idempotency_key="c-2")
    seeded.svc.run(
        seeded.svc.services.workspaces.update,
        seeded.workspace.workspace_id,
        WorkspaceChanges(monthly_limit=1),
    )
    quota = seeded.svc.public(key, data=FIELDS, origin=ORIGIN)

    assert_error(conflict, "idempotency_conflict")
    _assert_cors(conflict)
    assert_error(quota, "quota_exceeded")
    _assert_cors(quota)


def test_a_browser_page_echoes_the_origin_too(seeded: Seeded) -> None:
    response = seeded.svc.public(
        "no-such-key", data=FIELDS, origin=ORIGIN, headers={"accept": "text/html"}
    )

    assert response.status_code == 404
    _assert_cors(response)


def test_without_an_origin_no_cors_origin_is_invented(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)

    assert response.status_code == 201
    assert "access-control-allow-origin" not in response.headers
    assert response.headers["vary"] == "Origin"  # a shared cache must not mix the two
