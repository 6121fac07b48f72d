"""Numbers a double cannot hold, under a `number` rule: a field error, never a failure
of the service (decisions.md "Payload")."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from intake.domain.model import FieldRule, RuleKind
from tests.http.conftest import Seeded, assert_error

NUMBER = "Please enter a number."
HUGE = "9" * 400


@pytest.fixture
def numbered(seeded: Seeded) -> Seeded:
    seeded.svc.update_form(seeded.form.form_id, rules=[FieldRule("age", RuleKind.NUMBER)])
    return seeded


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(f'{{"age": {HUGE}}}', id="huge JSON integer"),
        pytest.param(f'{{"age": -{HUGE}}}', id="huge negative JSON integer"),
        pytest.param(f'{{"age": [1, {HUGE}]}}', id="huge JSON integer in a list"),
        pytest.param(f'{{"age": "{HUGE}"}}', id="huge number as JSON text"),
        pytest.param('{"age": "1e400"}', id="huge exponent as JSON text"),
    ],
)
def test_a_json_number_too_large_for_a_double_is_a_field_error(
    numbered: Seeded, document: str
) -> None:
    response = numbered.svc.public(
        numbered.form.public_form_key,
        headers={"content-type": "application/json"},
        content=document.encode(),
    )

    body = assert_error(response, "validation_failed")
    assert body["error"]["fields"] == {"age": NUMBER}
    assert "retry-after" not in response.headers
    assert numbered.svc.stored() == (0, 0)


@pytest.mark.parametrize("value", [HUGE, "-" + HUGE, "1e400", "-1e309", "inf", "Infinity"])
def test_a_form_encoded_number_too_large_for_a_double_is_a_field_error(
    numbered: Seeded, value: str
) -> None:
    response = numbered.svc.public(
        numbered.form.public_form_key,
        headers={"content-type": "application/x-www-form-urlencoded"},
        content=urlencode({"age": value}).encode(),
    )

    body = assert_error(response, "validation_failed")
    assert body["error"]["fields"] == {"age": NUMBER}


def test_a_huge_json_integer_without_a_number_rule_is_stored_as_sent(seeded: Seeded) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key,
        headers={"content-type": "application/json"},
        content=f'{{"count": {HUGE}}}'.encode(),
    )

    assert response.status_code == 201, response.text
    stored = seeded.svc.submission(response.json()["submission_id"])
    assert json.dumps(stored.data["count"]) == HUGE
