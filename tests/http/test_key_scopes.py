"""The server-side submission endpoint needs a key with the `submit` scope; a key without
it is refused exactly as an unknown key is (docs/api.md, "Keys and scopes")."""

from __future__ import annotations

import pytest

from intake.domain.model import Scope
from intake.service.admin import CreatedKey
from tests.http.conftest import Seeded, Service, assert_error

FIELDS = {"name": "Ada", "message": "Hello"}
UNKNOWN_KEY = "intake_sk_" + "1" * 39


def scoped_key(svc: Service, workspace_id: str, *scopes: Scope) -> CreatedKey:
    return svc.run(svc.services.keys.create, workspace_id, scopes=frozenset(scopes))


@pytest.mark.parametrize(
    "scopes",
    [
        pytest.param((Scope.READ,), id="read"),
        pytest.param((Scope.MANAGE,), id="manage"),
        pytest.param((Scope.READ, Scope.MANAGE), id="read and manage"),
    ],
)
def test_a_key_without_the_submit_scope_is_unauthorized(
    seeded: Seeded, scopes: tuple[Scope, ...]
) -> None:
    key = scoped_key(seeded.svc, seeded.workspace.workspace_id, *scopes)

    response = seeded.svc.server(seeded.form.form_id, key.secret, data=FIELDS)

    assert_error(response, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"
    assert seeded.svc.stored() == (0, 0)
    assert seeded.svc.used(seeded.workspace.workspace_id) == 0


def test_a_key_lacking_submit_is_answered_as_an_unknown_key_is(seeded: Seeded) -> None:
    key = scoped_key(seeded.svc, seeded.workspace.workspace_id, Scope.READ, Scope.MANAGE)

    answers = [
        seeded.svc.server(seeded.form.form_id, key.secret, data=FIELDS),
        seeded.svc.server(seeded.form.form_id, UNKNOWN_KEY, data=FIELDS),
        # An unknown form too: the key is checked before the form is looked up.
        seeded.svc.server("frm_missing", key.secret, data=FIELDS),
    ]

    bodies = [{**answer.json(), "request_id": None} for answer in answers]
    assert all(body == bodies[0] for body in bodies)
    assert {answer.status_code for answer in answers} == {401}
    assert {answer.headers["www-authenticate"] for answer in answers} == {"Bearer"}


@pytest.mark.parametrize(
    "scopes",
    [
        pytest.param((Scope.SUBMIT,), id="submit"),
        pytest.param((Scope.SUBMIT, Scope.READ), id="submit and read"),
        pytest.param((Scope.SUBMIT, Scope.READ, Scope.MANAGE), id="every scope"),
    ],
)
def test_a_key_with_the_submit_scope_submits(seeded: Seeded, scopes: tuple[Scope, ...]) -> None:
    key = scoped_key(seeded.svc, seeded.workspace.workspace_id, *scopes)

    response = seeded.svc.server(seeded.form.form_id, key.secret, data=FIELDS)

    assert response.status_code == 201, response.text
    assert seeded.svc.stored() == (1, 1)


def test_a_key_made_without_scopes_submits(seeded: Seeded) -> None:
    # The harness's key is made as `intake key create` without --scope makes one.
    assert seeded.key.key.scopes == frozenset({Scope.SUBMIT})

    response = seeded.svc.server(seeded.form.form_id, seeded.key.secret, data=FIELDS)

    assert response.status_code == 201, response.text
