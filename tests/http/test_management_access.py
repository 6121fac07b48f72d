"""Who may do what through the management API, for every operation of the contract's
table (management-api.md): a missing, malformed or revoked key is 401 unauthorized; a
key lacking the operation's scope is 403 forbidden and changes nothing; another
workspace's ids are 404 not_found, answered exactly as ids that do not exist."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2
import pytest
from attrs import frozen

from intake.domain.deliveries import DestinationKind
from intake.domain.model import Scope
from intake.service.admin import ChatRequest, CreatedKey
from tests.http.conftest import Service, assert_error

# The management API's own codes, copied from the contract's text.
MANAGEMENT_ERRORS: Mapping[str, tuple[int, str]] = {
    "forbidden": (403, "This key cannot do that."),
    "not_found": (404, "Not found."),
}

READ, MANAGE = Scope.READ, Scope.MANAGE


@frozen
class Operation:
    method: str
    # with {form_id}, {submission_id}, {endpoint_id}, {delivery_id}, {recipient_id},
    # {destination_id}
    path: str
    scope: Scope
    body: Mapping[str, Any] | None = None

    @property
    def takes_an_id(self) -> bool:
        return "{" in self.path

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


# The contract's table, one row per method and path, each with a body it would accept.
OPERATIONS = (
    Operation("GET", "/v1/forms", READ),
    Operation("POST", "/v1/forms", MANAGE, {"name": "Matrix"}),
    Operation("GET", "/v1/forms/{form_id}", READ),
    Operation("PATCH", "/v1/forms/{form_id}", MANAGE, {"name": "Renamed"}),
    Operation("POST", "/v1/forms/{form_id}/rotate-key", MANAGE),
    Operation("POST", "/v1/forms/{form_id}/templates/preview", MANAGE, {"kind": "autoresponse"}),
    Operation("GET", "/v1/forms/{form_id}/submissions", READ),
    Operation("GET", "/v1/submissions/{submission_id}", READ),
    Operation("PATCH", "/v1/submissions/{submission_id}", MANAGE, {"status": "spam"}),
    Operation("DELETE", "/v1/submissions/{submission_id}", MANAGE),
    Operation("GET", "/v1/forms/{form_id}/export?format=csv", READ),
    Operation("GET", "/v1/forms/{form_id}/export?format=jsonl", READ),
    Operation("GET", "/v1/forms/{form_id}/webhooks", READ),
    Operation(
        "POST",
        "/v1/forms/{form_id}/webhooks",
        MANAGE,
        {"url": "https://hooks.example.com/other", "include_flagged": False},
    ),
    Operation("DELETE", "/v1/webhooks/{endpoint_id}", MANAGE),
    Operation("POST", "/v1/webhooks/{endpoint_id}/test", MANAGE),
    Operation("GET", "/v1/webhooks/{endpoint_id}/deliveries", READ),
    Operation("GET", "/v1/webhooks/{endpoint_id}/deliveries?state=pending", READ),
    Operation("POST", "/v1/deliveries/{delivery_id}/retry", MANAGE),
    Operation("POST", "/v1/webhooks/{endpoint_id}/retry-dead", MANAGE),
    Operation("GET", "/v1/forms/{form_id}/notifications", READ),
    Operation("POST", "/v1/forms/{form_id}/notifications", MANAGE, {"email": "other@example.com"}),
    Operation("POST", "/v1/notifications/{recipient_id}/test", MANAGE),
    Operation("DELETE", "/v1/notifications/{recipient_id}", MANAGE),
    Operation("GET", "/v1/forms/{form_id}/destinations", READ),
    Operation(
        "POST",
        "/v1/forms/{form_id}/destinations",
        MANAGE,
        {"kind": "discord", "url": "https://discord.example.com/api/webhooks/1/x"},
    ),
    Operation("POST", "/v1/destinations/{destination_id}/test", MANAGE),
    Operation("DELETE", "/v1/destinations/{destination_id}", MANAGE),
    Operation("GET", "/v1/usage", READ),
)
MANAGE_OPERATIONS = [op for op in OPERATIONS if op.scope is MANAGE]
OPERATIONS_WITH_IDS = [op for op in OPERATIONS if op.takes_an_id]

# Ids of the right shape that no workspace has.
MISSING_IDS = {
    "form_id": "frm_missing0000000000",
    "submission_id": "sub_missing0000000000",
    "endpoint_id": "wh_missing0000000000",
    "delivery_id": "dlv_missing0000000000",
    "recipient_id": "rcpt_missing0000000000",
    "destination_id": "chat_missing0000000000",
}


def ids_param(operations: list[Operation] | tuple[Operation, ...]) -> list[Any]:
    return [pytest.param(op, id=str(op)) for op in operations]


class Workspace:
    """A workspace with one of everything the table's paths name: a form with a stored
    submission, a webhook endpoint with a delivery of it, and a mail recipient."""

    def __init__(self, svc: Service, name: str) -> None:
        self.svc = svc
        self.workspace_id = svc.workspace(name=name).workspace_id
        self.form_id = svc.form(self.workspace_id, name=f"{name} contact").form_id
        self.endpoint_id = svc.run(
            svc.services.webhooks.add, self.form_id, "https://hooks.example.com/intake"
        ).endpoint.endpoint_id
        self.recipient_id = svc.run(
            svc.services.recipients.add, self.form_id, "owner@example.com"
        ).recipient_id
        chat = ChatRequest(kind="slack", url="https://hooks.slack.example.com/services/x")
        self.destination_id = svc.run(svc.services.chats.add, self.form_id, chat).destination_id
        submitter = self.key(Scope.SUBMIT)
        answer = svc.server(self.form_id, submitter.secret, json={"message": f"from {name}"})
        assert answer.status_code == 201, answer.text
        self.submission_id: str = answer.json()["submission_id"]
        svc.run(svc.store.deliveries.fan_out, svc.clock.now(), 100)
        deliveries = svc.run(svc.store.deliveries.list_deliveries)
        (self.delivery_id,) = [
            d.delivery_id
            for d in deliveries
            if d.kind is DestinationKind.WEBHOOK and d.destination_id == self.endpoint_id
        ]

    def key(self, *scopes: Scope) -> CreatedKey:
        created: CreatedKey = self.svc.run(
            self.svc.services.keys.create, self.workspace_id, scopes=frozenset(scopes)
        )
        return created

    @property
    def ids(self) -> dict[str, str]:
        return {
            "form_id": self.form_id,
            "submission_id": self.submission_id,
            "endpoint_id": self.endpoint_id,
            "delivery_id": self.delivery_id,
            "recipient_id": self.recipient_id,
            "destination_id": self.destination_id,
        }

    def state(self) -> tuple[object, ...]:
        """Everything an operation of the table could change in this workspace."""
        svc = self.svc
        return (
            svc.run(svc.services.forms.all, self.workspace_id),
            svc.run(svc.store.submissions.get, self.submission_id),
            svc.run(svc.services.webhooks.all, self.form_id),
            svc.run(svc.services.recipients.all, self.form_id),
            svc.run(svc.services.chats.all, self.form_id),
            svc.run(svc.store.deliveries.list_deliveries),
            svc.run(svc.store.submissions.outbox, 1_000),
            svc.used(self.workspace_id),
        )


def call(
    svc: Service,
    operation: Operation,
    ids: Mapping[str, str],
    headers: Mapping[str, str] | None = None,
) -> httpx2.Response:
    return svc.client.request(
        operation.method,
        operation.path.format(**ids),
        json=operation.body,
        headers=dict(headers or {}),
    )


def bearer(key: CreatedKey) -> dict[str, str]:
    return {"authorization": f"Bearer {key.secret}"}


def assert_refused(response: httpx2.Response, code: str) -> dict[str, Any]:
    """The spec's envelope with the code's status and message."""
    if code not in MANAGEMENT_ERRORS:
        return assert_error(response, code)
    status, message = MANAGEMENT_ERRORS[code]
    assert response.status_code == status, f"{response.request.url}: {response.text}"
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body == {
        "ok": False,
        "error": {"code": code, "message": message},
        "request_id": response.headers["x-request-id"],
    }
    return body


@pytest.fixture(scope="module")
def world(module_service: Service) -> tuple[Workspace, Workspace]:
    """Two workspaces, built once for the tests that only read: each of them asks for
    keys of its own, so no key's rate limit counts another test's requests."""
    return Workspace(module_service, "Acme"), Workspace(module_service, "Other")


@pytest.fixture
def owner(world: tuple[Workspace, Workspace]) -> Workspace:
    return world[0]


@pytest.fixture
def stranger(world: tuple[Workspace, Workspace]) -> Workspace:
    return world[1]


@pytest.fixture
def own_owner(svc: Service) -> Workspace:
    """A workspace on a service of the test's own, for a test that changes it."""
    return Workspace(svc, "Acme")


# -- 401 unauthorized -------------------------------------------------------------------

BAD_AUTHORIZATION: list[dict[str, str]] = [
    {},  # missing
    {"authorization": ""},
    {"authorization": "Bearer"},
    {"authorization": "Bearer not-a-key"},
    {"authorization": "Basic aW50YWtlOnNlY3JldA=="},
    {"authorization": "Bearer intake_sk_" + "0" * 39},  # well formed, unknown
]


@pytest.mark.parametrize("operation", ids_param(OPERATIONS))
def test_a_missing_malformed_or_unknown_key_is_unauthorized(
    owner: Workspace, operation: Operation
) -> None:
    before = owner.state()
    for headers in BAD_AUTHORIZATION:
        response = call(owner.svc, operation, owner.ids, headers)
        assert_refused(response, "unauthorized")
    assert owner.state() == before


@pytest.mark.parametrize("operation", ids_param(OPERATIONS))
def test_a_revoked_key_is_unauthorized(owner: Workspace, operation: Operation) -> None:
    key = owner.key(Scope.SUBMIT, Scope.READ, Scope.MANAGE)
    owner.svc.run(owner.svc.services.keys.revoke, key.key.key_id)
    before = owner.state()

    response = call(owner.svc, operation, owner.ids, bearer(key))

    assert_refused(response, "unauthorized")
    assert owner.state() == before


# -- 403 forbidden ----------------------------------------------------------------------


@pytest.mark.parametrize("operation", ids_param(OPERATIONS))
def test_a_submit_key_can_do_nothing(owner: Workspace, operation: Operation) -> None:
    key = owner.key(Scope.SUBMIT)
    before = owner.state()

    response = call(owner.svc, operation, owner.ids, bearer(key))

    assert_refused(response, "forbidden")
    assert owner.state() == before


@pytest.mark.parametrize("operation", ids_param(MANAGE_OPERATIONS))
def test_a_read_key_changes_nothing(owner: Workspace, operation: Operation) -> None:
    key = owner.key(Scope.SUBMIT, Scope.READ)
    before = owner.state()

    response = call(owner.svc, operation, owner.ids, bearer(key))

    assert_refused(response, "forbidden")
    assert owner.state() == before


@pytest.mark.parametrize("operation", ids_param(MANAGE_OPERATIONS))
def test_forbidden_comes_before_any_look_at_the_ids(owner: Workspace, operation: Operation) -> None:
    # A key without the scope learns nothing about which ids exist.
    key = owner.key(Scope.READ)

    response = call(owner.svc, operation, MISSING_IDS, bearer(key))

    assert_refused(response, "forbidden")


# -- what each scope may do: the refusals above are not all there is ---------------------

READ_OPERATIONS = [op for op in OPERATIONS if op.scope is READ]
SUCCESS = {200, 201, 202, 204}


@pytest.mark.parametrize("operation", ids_param(READ_OPERATIONS))
@pytest.mark.parametrize(
    "scopes", [(Scope.READ,), (Scope.MANAGE,)], ids=["read", "manage implies read"]
)
def test_a_read_or_manage_key_reads(
    owner: Workspace, operation: Operation, scopes: tuple[Scope, ...]
) -> None:
    response = call(owner.svc, operation, owner.ids, bearer(owner.key(*scopes)))

    assert response.status_code == 200, response.text


@pytest.mark.parametrize("operation", ids_param(MANAGE_OPERATIONS))
def test_a_manage_key_may_do_each_manage_operation(
    own_owner: Workspace, operation: Operation
) -> None:
    owner = own_owner
    response = call(owner.svc, operation, owner.ids, bearer(owner.key(Scope.MANAGE)))

    assert response.status_code in SUCCESS, response.text


# -- 404 not_found ----------------------------------------------------------------------


@pytest.mark.parametrize("operation", ids_param(OPERATIONS_WITH_IDS))
def test_another_workspaces_ids_are_not_found(
    owner: Workspace, stranger: Workspace, operation: Operation
) -> None:
    key = stranger.key(Scope.READ, Scope.MANAGE)
    before = owner.state(), stranger.state()

    response = call(owner.svc, operation, owner.ids, bearer(key))

    assert_refused(response, "not_found")
    assert (owner.state(), stranger.state()) == before


@pytest.mark.parametrize("operation", ids_param(OPERATIONS_WITH_IDS))
def test_another_workspaces_ids_are_answered_as_missing_ids(
    owner: Workspace, stranger: Workspace, operation: Operation
) -> None:
    key = stranger.key(Scope.READ, Scope.MANAGE)

    elsewhere = call(owner.svc, operation, owner.ids, bearer(key))
    missing = call(owner.svc, operation, MISSING_IDS, bearer(key))

    assert_refused(missing, "not_found")
    assert elsewhere.status_code == missing.status_code
    assert {**elsewhere.json(), "request_id": None} == {**missing.json(), "request_id": None}


# -- unknown paths ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/v1/nothing", "/v1/forms/frm_x/nothing", "/v1/", "/v1/submissions", "/v1/keys"],
)
@pytest.mark.parametrize("with_key", [True, False], ids=["with a key", "without a key"])
def test_an_unknown_path_under_v1_is_not_found(owner: Workspace, path: str, with_key: bool) -> None:
    headers = bearer(owner.key(Scope.READ, Scope.MANAGE)) if with_key else {}

    response = owner.svc.client.get(path, headers=headers)

    assert_refused(response, "not_found")
