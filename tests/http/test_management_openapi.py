"""/openapi.json and the management API under /v1: every route is documented and every
documented operation is served, with the scope management-api.md gives it, its refusals
in the spec's envelope, and bodies that take only the fields they name.

The harness (`SpecCheck` in conftest.py) holds every answer of a documented operation
against the document; here each operation also answers once, refused for want of a key."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from starlette.routing import Route

from intake.config import Settings
from intake.domain.model import Scope
from intake.entrypoints.http.app import create_app
from intake.entrypoints.http.openapi import openapi_document
from tests.http.conftest import Seeded, Service, assert_error
from tests.http.spec_check import validate

# management-api.md's table, exactly: each operation and the scope it needs (and the
# recipient's test mail, the webhook test's counterpart).
CONTRACT = {
    ("GET", "/v1/forms"): "read",
    ("POST", "/v1/forms"): "manage",
    ("GET", "/v1/forms/{form_id}"): "read",
    ("PATCH", "/v1/forms/{form_id}"): "manage",
    ("POST", "/v1/forms/{form_id}/rotate-key"): "manage",
    ("GET", "/v1/forms/{form_id}/submissions"): "read",
    ("GET", "/v1/submissions/{submission_id}"): "read",
    ("PATCH", "/v1/submissions/{submission_id}"): "manage",
    ("DELETE", "/v1/submissions/{submission_id}"): "manage",
    ("GET", "/v1/forms/{form_id}/export"): "read",
    ("GET", "/v1/forms/{form_id}/webhooks"): "read",
    ("POST", "/v1/forms/{form_id}/webhooks"): "manage",
    ("DELETE", "/v1/webhooks/{endpoint_id}"): "manage",
    ("POST", "/v1/webhooks/{endpoint_id}/test"): "manage",
    ("GET", "/v1/webhooks/{endpoint_id}/deliveries"): "read",
    ("POST", "/v1/deliveries/{delivery_id}/retry"): "manage",
    # Beside one delivery's retry: every dead delivery to one endpoint (docs/api.md).
    ("POST", "/v1/webhooks/{endpoint_id}/retry-dead"): "manage",
    ("GET", "/v1/forms/{form_id}/notifications"): "read",
    ("POST", "/v1/forms/{form_id}/notifications"): "manage",
    ("DELETE", "/v1/notifications/{recipient_id}"): "manage",
    # Beside the webhook test: a test mail to one recipient (docs/api.md).
    ("POST", "/v1/notifications/{recipient_id}/test"): "manage",
    ("GET", "/v1/usage"): "read",
    # Beyond the table: a form's chat destinations (docs/api.md).
    ("GET", "/v1/forms/{form_id}/destinations"): "read",
    ("POST", "/v1/forms/{form_id}/destinations"): "manage",
    ("DELETE", "/v1/destinations/{destination_id}"): "manage",
    ("POST", "/v1/destinations/{destination_id}/test"): "manage",
    # Beyond the table: an erasure on request (docs/privacy.md, docs/decisions.md).
    ("POST", "/v1/erasures"): "manage",
    # Beyond the table: a form's mail templates shown with a sample submission (docs/api.md).
    ("POST", "/v1/forms/{form_id}/templates/preview"): "manage",
    # The contract table's last row: a form deleted with its submissions (docs/api.md).
    ("DELETE", "/v1/forms/{form_id}"): "manage",
    # Beyond the table: a form's settings copied into a new form (docs/api.md).
    ("POST", "/v1/forms/{form_id}/duplicate"): "manage",
    # Beyond the table: what the workspace's spam filter knows (docs/api.md).
    ("GET", "/v1/spam"): "read",
}
# The submission endpoint of the interface spec, under /v1 too but no management call.
SUBMISSION_ENDPOINT = ("POST", "/v1/forms/{form_id}/submissions")
FILE_DOWNLOADS = {("GET", "/v1/files/{submission_id}/{index}")}
URL = "https://hooks.example.com/intake"
METHODS = ("get", "put", "post", "patch", "delete", "head", "options")

ENVELOPE_CODES = {
    "400": {"malformed_request"},
    "401": {"unauthorized"},
    "403": {"forbidden"},
    "404": {"not_found"},
    "413": {"payload_too_large"},
    "415": {"unsupported_content_type"},
    "422": {"validation_failed"},
    "429": {"rate_limited"},
    "503": {"service_unavailable"},
}


def _documented() -> dict[tuple[str, str], dict[str, Any]]:
    paths = openapi_document()["paths"]
    return {
        (method.upper(), path): item[method]
        for path, item in paths.items()
        if path.startswith("/v1/")
        for method in METHODS
        if method in item
    }


def _management() -> dict[tuple[str, str], dict[str, Any]]:
    return {key: op for key, op in _documented().items() if key in CONTRACT}


def _served() -> set[tuple[str, str]]:
    app = create_app(Settings())
    served = set()
    for route in app.routes:
        if not isinstance(route, Route) or not route.path.startswith("/v1/"):
            continue
        methods = set(route.methods or ())
        # Starlette answers HEAD wherever GET is; a route asking for HEAD itself keeps it.
        if "GET" in methods and route.path not in {path for _, path in FILE_DOWNLOADS}:
            methods.discard("HEAD")
        served |= {(method, route.path) for method in methods}
    return served


def _resolve(node: Any) -> Any:
    document = openapi_document()
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        target: Any = document
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        return _resolve(target)
    if isinstance(node, dict):
        return {k: _resolve(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve(v) for v in node]
    return node


def test_every_v1_route_is_documented_and_every_documented_operation_is_served() -> None:
    documented = set(_documented())
    served = _served()
    # HEAD of the downloads is documented on its own; GET's HEAD elsewhere is implied.
    served_documented = {(m, p) for m, p in served if m != "HEAD" or (m, p) in documented}

    assert served_documented - documented == set(), "served, not documented"
    assert documented - served == set(), "documented, not served"


def test_the_document_holds_the_contract_table_and_nothing_more_under_v1() -> None:
    documented = set(_documented())
    head_of_downloads = {("HEAD", "/v1/files/{submission_id}/{index}")}

    assert documented == set(CONTRACT) | {SUBMISSION_ENDPOINT} | FILE_DOWNLOADS | head_of_downloads


@pytest.mark.parametrize(("method", "path"), sorted(CONTRACT))
def test_each_operation_names_its_scope_and_bearer_key(method: str, path: str) -> None:
    operation = _management()[(method, path)]
    scope = CONTRACT[(method, path)]

    assert operation["security"] == [{"apiKey": [scope]}]
    assert operation["x-scopes"] == [scope]
    assert f"`{scope}`" in operation["description"]
    assert operation["operationId"]


def test_the_submission_endpoint_names_the_submit_scope() -> None:
    operation = _documented()[SUBMISSION_ENDPOINT]

    assert operation["security"] == [{"apiKey": ["submit"]}]
    assert operation["x-scopes"] == ["submit"]


@pytest.mark.parametrize(("method", "path"), sorted(CONTRACT))
def test_each_operation_documents_every_refusal_it_can_give(method: str, path: str) -> None:
    operation = _management()[(method, path)]
    responses = operation["responses"]
    expected = {"401", "403", "429", "503"}
    if "{" in path:
        expected.add("404")
    parameters = [p for p in operation.get("parameters", []) if p["in"] == "query"]
    if parameters:
        expected.add("422")
    if "requestBody" in operation:
        expected |= {"400", "413", "415", "422"}

    assert expected <= set(responses), sorted(expected - set(responses))
    for status in ("429", "503"):
        assert responses[status]["headers"]["Retry-After"]["required"] is True
    successes = [status for status in responses if status.startswith("2")]
    assert len(successes) == 1, successes


@pytest.mark.parametrize(("method", "path"), sorted(CONTRACT))
def test_each_refusal_is_the_spec_envelope_with_the_tables_message(method: str, path: str) -> None:
    responses = _management()[(method, path)]["responses"]

    for status, response in responses.items():
        if status.startswith("2"):
            continue
        schema = _resolve(response)["content"]["application/json"]["schema"]
        variants = schema.get("oneOf", [schema])
        codes = {
            variant["properties"]["error"]["properties"]["code"]["const"] for variant in variants
        }
        assert codes == ENVELOPE_CODES[status], (status, codes)
        for variant in variants:
            error = variant["properties"]["error"]["properties"]
            envelope: dict[str, Any] = {
                "ok": False,
                "error": {"code": error["code"]["const"], "message": error["message"]["const"]},
                "request_id": "req_1",
            }
            if status == "422":
                envelope["error"]["fields"] = {"limit": "At most 200."}
            validate(envelope, variant)
            with pytest.raises(jsonschema.ValidationError):
                validate({**envelope, "ok": True}, variant)


@pytest.mark.parametrize(("method", "path"), sorted(CONTRACT))
def test_request_bodies_take_json_objects_of_the_named_fields_only(method: str, path: str) -> None:
    operation = _management()[(method, path)]
    body = operation.get("requestBody")
    if body is None:
        bodiless = ("/test", "/retry", "/retry-dead", "/rotate-key")
        assert method in ("GET", "DELETE") or path.endswith(bodiless)
        return

    assert set(body["content"]) == {"application/json"}
    schema = body["content"]["application/json"]["schema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    with pytest.raises(jsonschema.ValidationError):
        validate({"surely_not_a_field": 1}, schema)


# Lists that page; a form's webhooks and mail recipients, a handful at most, come whole.
PAGED_LISTS = [
    ("GET", "/v1/forms"),
    ("GET", "/v1/forms/{form_id}/submissions"),
    ("GET", "/v1/webhooks/{endpoint_id}/deliveries"),
]
WHOLE_LISTS = [
    ("GET", "/v1/forms/{form_id}/webhooks"),
    ("GET", "/v1/forms/{form_id}/notifications"),
    ("GET", "/v1/forms/{form_id}/destinations"),
]


@pytest.mark.parametrize("key", PAGED_LISTS + WHOLE_LISTS)
def test_lists_answer_a_page_of_data_and_next_cursor(key: tuple[str, str]) -> None:
    operation = _management()[key]

    page = _resolve(operation["responses"]["200"])["content"]["application/json"]["schema"]

    assert set(page["required"]) == {"data", "next_cursor"}
    validate({"data": [], "next_cursor": None}, page)
    with pytest.raises(jsonschema.ValidationError):
        validate({"data": []}, page)


@pytest.mark.parametrize("key", PAGED_LISTS)
def test_paged_lists_take_limit_and_cursor(key: tuple[str, str]) -> None:
    operation = _management()[key]

    parameters = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}

    assert parameters["limit"]["schema"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 200,
        "default": 50,
    }
    assert parameters["cursor"]["schema"] == {"type": "string"}


def test_the_listing_and_export_filters_are_documented() -> None:
    for path in ("/v1/forms/{form_id}/submissions", "/v1/forms/{form_id}/export"):
        operation = _management()[("GET", path)]
        parameters = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
        status = parameters["status"]
        assert status["explode"] is True
        assert status["schema"]["items"]["enum"] == ["accepted", "spam", "unverified"]
        for name in ("since", "until"):
            assert parameters[name]["schema"]["format"] == "date-time"
        assert parameters["q"]["schema"]["maxLength"] == 200
    export = _management()[("GET", "/v1/forms/{form_id}/export")]
    formats = {p["name"]: p for p in export["parameters"]}["format"]["schema"]["enum"]
    assert formats == ["csv", "jsonl"]


@pytest.mark.parametrize(("method", "path"), sorted(CONTRACT))
def test_each_operation_answers_a_request_without_a_key_as_documented(
    svc: Service, method: str, path: str
) -> None:
    url = path.format(
        form_id="frm_x",
        submission_id="sub_x",
        endpoint_id="wh_x",
        delivery_id="dlv_x",
        recipient_id="rcpt_x",
        destination_id="chat_x",
    )
    operation_id = _management()[(method, path)]["operationId"]

    response = svc.client.request(method, url, json={} if method in ("POST", "PATCH") else None)

    assert_error(response, "unauthorized")
    assert (operation_id, 401, "unauthorized") in svc.spec.seen


def _documented_keys(schema: dict[str, Any]) -> set[str]:
    """The keys an object schema names, through `$ref` and `allOf`."""
    schema = _resolve(schema)
    keys = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        keys |= _documented_keys(part)
    return keys


def _schema_of(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = openapi_document()["components"]["schemas"][name]
    return schema


def test_each_object_answered_has_exactly_the_documented_keys(seeded: Seeded) -> None:
    svc = seeded.svc
    ws, form_id = seeded.workspace.workspace_id, seeded.form.form_id
    manage = svc.run(svc.services.keys.create, ws, frozenset({Scope.MANAGE})).secret
    auth = {"Authorization": f"Bearer {manage}"}
    submitted = svc.server(form_id, seeded.key.secret, json={"email": "ada@example.com"})
    submission_id = submitted.json()["submission_id"]

    created = svc.client.post(f"/v1/forms/{form_id}/webhooks", headers=auth, json={"url": URL})
    endpoint_id = created.json()["endpoint_id"]
    answers = {
        "CreatedWebhookEndpoint": created,
        "Form": svc.client.post(
            "/v1/forms", headers=auth, json={"name": "Files", "uploads": {"max_files": 2}}
        ),
        "NotificationRecipient": svc.client.post(
            f"/v1/forms/{form_id}/notifications", headers=auth, json={"email": "a@example.com"}
        ),
        "Delivery": svc.client.post(f"/v1/webhooks/{endpoint_id}/test", headers=auth),
        "SubmissionDetail": svc.client.get(f"/v1/submissions/{submission_id}", headers=auth),
        "Usage": svc.client.get("/v1/usage", headers=auth),
        "SpamFilter": svc.client.get("/v1/spam", headers=auth),
    }
    listed = {
        "Submission": svc.client.get(f"/v1/forms/{form_id}/submissions", headers=auth),
        "WebhookEndpoint": svc.client.get(f"/v1/forms/{form_id}/webhooks", headers=auth),
    }

    for name, response in answers.items():
        assert response.status_code in (200, 201, 202), (name, response.text)
        assert set(response.json()) == _documented_keys(_schema_of(name)), name
    for name, response in listed.items():
        assert response.status_code == 200, (name, response.text)
        item = response.json()["data"][0]
        assert set(item) == _documented_keys(_schema_of(name)), name
    form = answers["Form"].json()
    assert set(form["uploads"]) == set(
        _schema_of("Form")["properties"]["uploads"]["anyOf"][0]["properties"]
    )
    spam = answers["SpamFilter"].json()
    assert set(spam["instance"]) == set(
        _schema_of("SpamFilter")["properties"]["instance"]["properties"]
    )
    usage = answers["Usage"].json()
    assert set(usage["forms"][0]) == set(
        _schema_of("Usage")["properties"]["forms"]["items"]["properties"]
    )
