"""Who may submit where: forms, keys, origins, paused forms and the bot challenge
(spec parts 4, 5 and 7)."""

from __future__ import annotations

import pytest

from intake.domain.model import Challenge, ChallengeProvider, FormMode
from intake.ports.challenge import ChallengeVerdict
from tests.http.conftest import Seeded, assert_error

FIELDS = {"name": "Ada", "message": "Hello"}


# -- unauthorized -----------------------------------------------------------------------


def test_a_protected_form_is_refused_on_the_public_endpoint(seeded: Seeded) -> None:
    seeded.svc.update_form(seeded.form.form_id, mode=FormMode.PROTECTED)

    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)

    assert_error(response, "unauthorized")
    assert seeded.svc.stored() == (0, 0)


def test_a_protected_form_is_reachable_through_the_server_endpoint(seeded: Seeded) -> None:
    seeded.svc.update_form(seeded.form.form_id, mode=FormMode.PROTECTED)

    response = seeded.svc.server(seeded.form.form_id, seeded.key.secret, data=FIELDS)

    assert response.status_code == 201


@pytest.mark.parametrize(
    "authorization",
    [
        pytest.param(None, id="missing"),
        pytest.param("", id="empty"),
        pytest.param("Bearer", id="scheme alone"),
        pytest.param("Bearer not-a-key", id="malformed key"),
        pytest.param("Basic aW50YWtlOnNlY3JldA==", id="wrong scheme"),
        pytest.param("Bearer intake_sk_" + "0" * 39, id="unknown key"),
    ],
)
def test_a_missing_malformed_or_unknown_key_is_unauthorized(
    seeded: Seeded, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"authorization": authorization}

    response = seeded.svc.server(seeded.form.form_id, None, data=FIELDS, headers=headers)

    assert_error(response, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"
    assert seeded.svc.stored() == (0, 0)


def test_a_key_given_with_another_scheme_is_unauthorized(seeded: Seeded) -> None:
    response = seeded.svc.server(
        seeded.form.form_id,
        None,
        data=FIELDS,
        headers={"authorization": f"Token {seeded.key.secret}"},
    )

    assert_error(response, "unauthorized")


def test_the_bearer_scheme_is_case_insensitive(seeded: Seeded) -> None:
    response = seeded.svc.server(
        seeded.form.form_id,
        None,
        data=FIELDS,
        headers={"authorization": f"bearer {seeded.key.secret}"},
    )

    assert response.status_code == 201


def test_a_revoked_key_is_unauthorized(seeded: Seeded) -> None:
    seeded.svc.run(seeded.svc.services.keys.revoke, seeded.key.key.key_id)

    response = seeded.svc.server(seeded.form.form_id, seeded.key.secret, data=FIELDS)

    assert_error(response, "unauthorized")
    assert seeded.svc.stored() == (0, 0)


def test_an_unauthorized_answer_is_the_same_for_every_kind_of_bad_key(seeded: Seeded) -> None:
    seeded.svc.run(seeded.svc.services.keys.revoke, seeded.key.key.key_id)
    answers = [
        seeded.svc.server(seeded.form.form_id, seeded.key.secret, data=FIELDS),
        seeded.svc.server(seeded.form.form_id, "intake_sk_" + "1" * 39, data=FIELDS),
        seeded.svc.server(seeded.form.form_id, None, data=FIELDS),
    ]

    bodies = [{**a.json(), "request_id": None} for a in answers]
    assert all(body == bodies[0] for body in bodies)
    assert {a.status_code for a in answers} == {401}


# -- origin_not_allowed -----------------------------------------------------------------


@pytest.fixture
def listed(seeded: Seeded) -> Seeded:
    seeded.svc.update_form(
        seeded.form.form_id, allowed_origins=["https://shop.example", "https://*.acme.example"]
    )
    return seeded


def test_an_absent_origin_is_refused_when_the_list_is_on(listed: Seeded) -> None:
    response = listed.svc.public(listed.form.public_form_key, data=FIELDS)

    assert_error(response, "origin_not_allowed")
    assert listed.svc.stored() == (0, 0)


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://shop.example",
        "https://shop.example:8443",
        "https://shop.example.evil.example",
        "https://acme.example",
        "null",
    ],
)
def test_an_origin_not_on_the_list_is_refused(listed: Seeded, origin: str) -> None:
    response = listed.svc.public(listed.form.public_form_key, data=FIELDS, origin=origin)

    assert_error(response, "origin_not_allowed")
    assert listed.svc.stored() == (0, 0)


@pytest.mark.parametrize(
    "origin", ["https://shop.example", "https://SHOP.example:443", "https://www.acme.example"]
)
def test_a_listed_origin_passes(listed: Seeded, origin: str) -> None:
    response = listed.svc.public(listed.form.public_form_key, data=FIELDS, origin=origin)

    assert response.status_code == 201, response.text


def test_the_origin_is_checked_before_the_body_is_parsed(listed: Seeded) -> None:
    response = listed.svc.public(
        listed.form.public_form_key,
        content=b"{not json",
        headers={"content-type": "text/plain"},
        origin="https://evil.example",
    )

    assert_error(response, "origin_not_allowed")


def test_the_origin_list_does_not_apply_to_the_server_endpoint(listed: Seeded) -> None:
    response = listed.svc.server(
        listed.form.form_id,
        listed.key.secret,
        data=FIELDS,
        headers={"origin": "https://evil.example"},
    )

    assert response.status_code == 201


def test_without_a_list_any_origin_or_none_is_accepted(seeded: Seeded) -> None:
    with_origin = seeded.svc.public(
        seeded.form.public_form_key, data=FIELDS, origin="https://anywhere.example"
    )
    without = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)

    assert (with_origin.status_code, without.status_code) == (201, 201)


# -- form_disabled ----------------------------------------------------------------------


def test_a_paused_form_is_disabled_on_both_endpoints(seeded: Seeded) -> None:
    seeded.svc.update_form(seeded.form.form_id, enabled=False)

    public = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)
    server = seeded.svc.server(seeded.form.form_id, seeded.key.secret, data=FIELDS)

    assert_error(public, "form_disabled")
    assert_error(server, "form_disabled")
    assert seeded.svc.stored() == (0, 0)


def test_a_form_of_a_suspended_workspace_is_disabled(seeded: Seeded) -> None:
    seeded.svc.run(seeded.svc.services.workspaces.set_active, seeded.workspace.workspace_id, False)

    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)

    assert_error(response, "form_disabled")


def test_a_resumed_form_accepts_again(seeded: Seeded) -> None:
    seeded.svc.update_form(seeded.form.form_id, enabled=False)
    seeded.svc.update_form(seeded.form.form_id, enabled=True)

    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)

    assert response.status_code == 201


# -- form_not_found ---------------------------------------------------------------------


def test_an_unknown_public_key_is_not_found(seeded: Seeded) -> None:
    response = seeded.svc.public("no-such-form-key", data=FIELDS)

    assert_error(response, "form_not_found")


def test_a_rotated_key_no_longer_resolves_and_the_new_one_does(seeded: Seeded) -> None:
    rotated = seeded.svc.run(seeded.svc.services.forms.rotate_key, seeded.form.form_id)

    old = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)
    new = seeded.svc.public(rotated.public_form_key, data=FIELDS)

    assert_error(old, "form_not_found")
    assert new.status_code == 201


def test_another_workspaces_form_id_is_not_found_with_a_valid_key(seeded: Seeded) -> None:
    other = seeded.svc.workspace(name="Other")
    foreign = seeded.svc.form(other.workspace_id)

    response = seeded.svc.server(foreign.form_id, seeded.key.secret, data=FIELDS)

    assert_error(response, "form_not_found")
    assert seeded.svc.stored() == (0, 0)


def test_an_unknown_form_id_is_not_found_alike(seeded: Seeded) -> None:
    other = seeded.svc.workspace(name="Other")
    foreign = seeded.svc.form(other.workspace_id)

    unknown = seeded.svc.server("frm_nosuchform", seeded.key.secret, data=FIELDS)
    theirs = seeded.svc.server(foreign.form_id, seeded.key.secret, data=FIELDS)

    assert_error(unknown, "form_not_found")
    assert {**unknown.json(), "request_id": ""} == {**theirs.json(), "request_id": ""}


def test_a_form_is_found_before_it_is_checked_for_a_pause(seeded: Seeded) -> None:
    seeded.svc.update_form(seeded.form.form_id, enabled=False)

    response = seeded.svc.public("no-such-form-key", data=FIELDS)

    assert_error(response, "form_not_found")


# -- challenge_failed -------------------------------------------------------------------


@pytest.fixture
def guarded(seeded: Seeded) -> Seeded:
    seeded.svc.update_form(
        seeded.form.form_id, challenge=Challenge(ChallengeProvider.TURNSTILE, "secret")
    )
    seeded.fake_challenge.verdicts.update(
        {"good-token": ChallengeVerdict.PASSED, "provider-down": ChallengeVerdict.UNAVAILABLE}
    )
    return seeded


def test_a_missing_token_on_a_challenge_form_fails(guarded: Seeded) -> None:
    response = guarded.svc.public(guarded.form.public_form_key, data=FIELDS)

    assert_error(response, "challenge_failed")
    assert guarded.svc.stored() == (0, 0)


def test_a_token_the_provider_rejects_fails(guarded: Seeded) -> None:
    response = guarded.svc.public(
        guarded.form.public_form_key, data={**FIELDS, "cf-turnstile-response": "forged"}
    )

    assert_error(response, "challenge_failed")
    assert guarded.fake_challenge.calls[-1][1:] == ("forged", "203.0.113.5")
    assert guarded.svc.stored() == (0, 0)


def test_a_token_the_provider_accepts_passes(guarded: Seeded) -> None:
    response = guarded.svc.public(
        guarded.form.public_form_key, data={**FIELDS, "cf-turnstile-response": "good-token"}
    )

    assert response.status_code == 201
    stored = guarded.svc.submission(response.json()["submission_id"])
    assert stored.status.value == "accepted"
    assert stored.data == FIELDS


@pytest.mark.parametrize("field", ["h-captcha-response", "g-recaptcha-response"])
def test_every_widgets_token_field_carries_the_token(guarded: Seeded, field: str) -> None:
    response = guarded.svc.public(
        guarded.form.public_form_key, data={**FIELDS, field: "good-token"}
    )

    assert response.status_code == 201
    assert field not in guarded.svc.submission(response.json()["submission_id"]).data


def test_a_json_client_may_send_the_token_in_a_header(guarded: Seeded) -> None:
    response = guarded.svc.public(
        guarded.form.public_form_key, json=FIELDS, headers={"x-challenge-token": "good-token"}
    )

    assert response.status_code == 201


def test_a_rejected_header_token_fails(guarded: Seeded) -> None:
    response = guarded.svc.public(
        guarded.form.public_form_key, json=FIELDS, headers={"x-challenge-token": "forged"}
    )

    assert_error(response, "challenge_failed")


def test_the_server_endpoint_skips_the_challenge(guarded: Seeded) -> None:
    response = guarded.svc.server(guarded.form.form_id, guarded.key.secret, json=FIELDS)

    assert response.status_code == 201
    assert guarded.fake_challenge.calls == []
    stored = guarded.svc.submission(response.json()["submission_id"])
    assert stored.status.value == "accepted"
