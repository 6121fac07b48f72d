"""/openapi.json: a valid OpenAPI 3.1 document that tells the truth about the service.

Every answer any test of this suite receives is also held against this document by the
harness (`SpecCheck` in conftest.py); the tests here check the document itself and walk
every error code through both endpoints."""

from __future__ import annotations

from typing import Any

import httpx2
import jsonschema
import pytest
from openapi_spec_validator import OpenAPIV31SpecValidator

from intake.config import Settings
from intake.domain.model import Challenge, ChallengeProvider, FieldRule, FormMode, RuleKind
from intake.domain.ratelimit import RateLimits, RateRule
from intake.service.admin import WorkspaceChanges
from tests.http.conftest import (
    SPEC_ERRORS,
    Seeded,
    Service,
    ServiceFactory,
    assert_error,
)
from tests.http.spec_check import validate

PUBLIC = ("/f/{public_form_key}", "post")
SERVER = ("/v1/forms/{form_id}/submissions", "post")
CONTENT_TYPES = {"application/x-www-form-urlencoded", "multipart/form-data", "application/json"}
# Where each code can occur: the origin list and the challenge are not applied to an
# authenticated caller, so those two never come from the server endpoint.
SERVER_CODES = set(SPEC_ERRORS) - {"origin_not_allowed", "challenge_failed"}
FIELDS = {"name": "Ada"}


@pytest.fixture
def document(svc: Service) -> dict[str, Any]:
    response = svc.client.get("/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    return body


def _resolve(node: Any, document: dict[str, Any]) -> Any:
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        target: Any = document
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        return _resolve(target, document)
    if isinstance(node, dict):
        return {k: _resolve(v, document) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v, document) for v in node]
    return node


def test_the_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")

    OpenAPIV31SpecValidator(document).validate()


def test_the_document_describes_both_post_endpoints(document: dict[str, Any]) -> None:
    for path, method in (PUBLIC, SERVER):
        operation = document["paths"][path][method]
        assert set(operation["requestBody"]["content"]) == CONTENT_TYPES
        assert {"201", "200"} <= set(operation["responses"])
        assert "Idempotency-Key" in {p["name"] for p in operation.get("parameters", [])}
    assert document["paths"][SERVER[0]][SERVER[1]]["security"]


@pytest.mark.parametrize(
    ("endpoint", "codes"), [(PUBLIC, set(SPEC_ERRORS)), (SERVER, SERVER_CODES)]
)
def test_every_error_code_is_documented_with_its_status_and_envelope(
    document: dict[str, Any], endpoint: tuple[str, str], codes: set[str]
) -> None:
    responses = document["paths"][endpoint[0]][endpoint[1]]["responses"]

    for code in sorted(codes):
        status, message = SPEC_ERRORS[code]
        assert str(status) in responses, f"{code}: {status} not documented"
        schema = _resolve(responses[str(status)], document)["content"]["application/json"]
        envelope: dict[str, Any] = {
            "ok": False,
            "error": {"code": code, "message": message},
            "request_id": "req_1",
        }
        if code == "validation_failed":
            envelope["error"]["fields"] = {"email": "Please enter a valid email address."}
        validate(envelope, schema["schema"])
        wrong = {**envelope, "error": {**envelope["error"], "message": "Something else."}}
        with pytest.raises(jsonschema.ValidationError):
            validate(wrong, schema["schema"])


def test_the_success_schema_matches_the_spec(document: dict[str, Any]) -> None:
    schema = _resolve(document["paths"][PUBLIC[0]][PUBLIC[1]]["responses"]["201"], document)[
        "content"
    ]["application/json"]["schema"]

    assert set(schema["required"]) == {"ok", "submission_id", "message"}
    validate({"ok": True, "submission_id": "sub_x", "message": "Thanks"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        validate({"ok": True}, schema)


def _every_public_error(svc: Service, seeded: Seeded) -> dict[str, httpx2.Response]:
    ws = seeded.workspace.workspace_id
    form = seeded.form
    key = form.public_form_key
    protected = svc.form(ws, mode=FormMode.PROTECTED)
    paused = svc.form(ws)
    svc.update_form(paused.form_id, enabled=False)
    listed = svc.form(ws, allowed_origins=["https://shop.example"])
    guarded = svc.form(ws, challenge=Challenge(ChallengeProvider.TURNSTILE, "s"))
    ruled = svc.form(ws, rules=[FieldRule("email", RuleKind.REQUIRED)])
    answers = {
        "malformed_request": svc.public(
            key, content=b"{", headers={"content-type": "application/json"}
        ),
        "unsupported_content_type": svc.public(
            key, content=b"x", headers={"content-type": "text/plain"}
        ),
        "payload_too_large": svc.public(key, data={"m": "x" * 20_481}),
        "validation_failed": svc.public(ruled.public_form_key, data=FIELDS),
        "unauthorized": svc.public(protected.public_form_key, data=FIELDS),
        "origin_not_allowed": svc.public(listed.public_form_key, data=FIELDS),
        "form_disabled": svc.public(paused.public_form_key, data=FIELDS),
        "form_not_found": svc.public("no-such-key", data=FIELDS),
        "challenge_failed": svc.public(guarded.public_form_key, data=FIELDS),
    }
    svc.public(key, data=FIELDS, idempotency_key="i-1", peer="198.51.100.3")
    answers["idempotency_conflict"] = svc.public(
        key, data={"x": "y"}, idempotency_key="i-1", peer="198.51.100.3"
    )
    svc.fail_commits(1)
    answers["service_unavailable"] = svc.public(key, data=FIELDS, peer="198.51.100.4")
    svc.run(svc.services.workspaces.update, ws, WorkspaceChanges(monthly_limit=1))
    answers["quota_exceeded"] = svc.public(key, data=FIELDS, peer="198.51.100.1")
    for _ in range(5):
        svc.public(key, data=FIELDS, peer="198.51.100.2")
    answers["rate_limited"] = svc.public(key, data=FIELDS, peer="198.51.100.2")
    return answers


def test_every_public_error_answer_validates_against_the_document(
    make_service: ServiceFactory,
) -> None:
    svc = make_service(Settings(rate_limits=RateLimits(public_form=RateRule(1000, 600))))
    seeded = Seeded(svc)

    answers = _every_public_error(svc, seeded)

    assert set(answers) == set(SPEC_ERRORS)
    for code, response in answers.items():
        assert_error(response, code)
        svc.spec.check(response)
    validated = {code for op, _, code in svc.spec.seen if op == "submitPublic"}
    assert set(SPEC_ERRORS) <= validated


def test_every_server_error_answer_validates_against_the_document(seeded: Seeded) -> None:
    svc = seeded.svc
    ws = seeded.workspace.workspace_id
    form_id, secret = seeded.form.form_id, seeded.key.secret
    paused = svc.form(ws)
    svc.update_form(paused.form_id, enabled=False)
    ruled = svc.form(ws, rules=[FieldRule("email", RuleKind.REQUIRED)])
    answers = {
        "malformed_request": svc.server(
            form_id, secret, content=b"[]", headers={"content-type": "application/json"}
        ),
        "unsupported_content_type": svc.server(
            form_id, secret, content=b"x", headers={"content-type": "text/csv"}
        ),
        "payload_too_large": svc.server(form_id, secret, json={"a": {"b": {"c": {"d": 1}}}}),
        "validation_failed": svc.server(ruled.form_id, secret, data=FIELDS),
        "unauthorized": svc.server(form_id, None, data=FIELDS),
        "form_disabled": svc.server(paused.form_id, secret, data=FIELDS),
        "form_not_found": svc.server("frm_none", secret, data=FIELDS),
    }
    svc.server(form_id, secret, data=FIELDS, idempotency_key="i-1")
    answers["idempotency_conflict"] = svc.server(
        form_id, secret, data={"x": "y"}, idempotency_key="i-1"
    )
    svc.fail_commits(1)
    answers["service_unavailable"] = svc.server(form_id, secret, data=FIELDS)
    svc.run(svc.services.workspaces.update, ws, WorkspaceChanges(monthly_limit=1))
    answers["quota_exceeded"] = svc.server(form_id, secret, data=FIELDS)
    for _ in range(50):
        svc.server(form_id, secret, data=FIELDS)
    answers["rate_limited"] = svc.server(form_id, secret, data=FIELDS)

    assert set(answers) == SERVER_CODES
    for code, response in answers.items():
        assert_error(response, code)
        svc.spec.check(response)


def test_success_replay_and_redirect_answers_validate_against_the_document(
    seeded: Seeded,
) -> None:
    svc = seeded.svc
    key = seeded.form.public_form_key
    answers = [
        svc.public(key, data=FIELDS, idempotency_key="s-1"),
        svc.public(key, data=FIELDS, idempotency_key="s-1"),
        svc.public(key, data=FIELDS, headers={"accept": "text/html"}),
        svc.server(seeded.form.form_id, seeded.key.secret, json=FIELDS),
        svc.client.options(f"/f/{key}", headers={"origin": "https://a.example"}),
    ]

    assert [a.status_code for a in answers] == [201, 200, 303, 201, 204]
    for response in answers:
        svc.spec.check(response)
