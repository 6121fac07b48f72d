"""Idempotency-Key over HTTP: replays, conflicts, scope and the 24-hour window
(spec parts 3 and 8, decisions.md "Idempotency")."""

from __future__ import annotations

from tests.http.conftest import Seeded, assert_error

FIELDS = {"name": "Ada", "email": "ada@example.com", "message": "Hello"}
DAY = 24 * 60 * 60


def test_a_replay_answers_200_with_the_original_body_and_stores_nothing_new(
    seeded: Seeded,
) -> None:
    first = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="k-1")

    replay = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="k-1")

    assert first.status_code == 201
    assert "idempotent-replayed" not in first.headers
    assert replay.status_code == 200
    assert replay.json() == first.json()
    assert replay.headers["idempotent-replayed"] == "true"
    assert seeded.svc.stored() == (1, 1)


def test_the_same_payload_replays_whatever_the_content_type_or_field_order(
    seeded: Seeded,
) -> None:
    key = seeded.form.public_form_key
    first = seeded.svc.public(
        key,
        content=b"name=Ada&email=ada%40example.com&message=Hello&tags=a&tags=b",
        headers={"content-type": "application/x-www-form-urlencoded"},
        idempotency_key="k-2",
    )
    as_json = seeded.svc.public(
        key,
        json={"tags": ["a", "b"], "message": "Hello", "email": "ada@example.com", "name": "Ada"},
        idempotency_key="k-2",
    )
    as_multipart = seeded.svc.public(
        key,
        files=[
            ("message", (None, b"Hello")),
            ("tags", (None, b"a")),
            ("name", (None, b"Ada")),
            ("tags", (None, b"b")),
            ("email", (None, b"ada@example.com")),
        ],
        idempotency_key="k-2",
    )

    assert first.status_code == 201
    assert (as_json.status_code, as_multipart.status_code) == (200, 200)
    assert as_json.json() == as_multipart.json() == first.json()
    assert seeded.svc.stored() == (1, 1)


def test_a_different_payload_with_the_same_key_conflicts_and_overwrites_nothing(
    seeded: Seeded,
) -> None:
    first = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="k-3")

    other = seeded.svc.public(
        seeded.form.public_form_key,
        data={**FIELDS, "message": "Something else"},
        idempotency_key="k-3",
    )
    again = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="k-3")

    assert_error(other, "idempotency_conflict")
    assert seeded.svc.stored() == (1, 1)
    stored = seeded.svc.submission(first.json()["submission_id"])
    assert stored.data["message"] == "Hello"
    assert again.status_code == 200
    assert again.json() == first.json()


def test_repeated_values_in_another_order_are_a_different_payload(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    seeded.svc.public(key, content=b"tags=a&tags=b", headers=_form(), idempotency_key="k-4")

    response = seeded.svc.public(
        key, content=b"tags=b&tags=a", headers=_form(), idempotency_key="k-4"
    )

    assert_error(response, "idempotency_conflict")


def test_control_fields_are_part_of_the_payload(seeded: Seeded) -> None:
    seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "_subject": "A"}, idempotency_key="k-5"
    )

    response = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "_subject": "B"}, idempotency_key="k-5"
    )

    assert_error(response, "idempotency_conflict")


def test_keys_are_scoped_per_form(seeded: Seeded) -> None:
    second = seeded.svc.form(seeded.workspace.workspace_id)
    first = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="shared")

    other_form = seeded.svc.public(second.public_form_key, data=FIELDS, idempotency_key="shared")

    assert other_form.status_code == 201
    assert other_form.json()["submission_id"] != first.json()["submission_id"]
    assert seeded.svc.stored() == (2, 2)


def test_keys_are_scoped_per_endpoint(seeded: Seeded) -> None:
    public = seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key="shared")

    server = seeded.svc.server(
        seeded.form.form_id, seeded.key.secret, data=FIELDS, idempotency_key="shared"
    )
    server_again = seeded.svc.server(
        seeded.form.form_id, seeded.key.secret, data=FIELDS, idempotency_key="shared"
    )

    assert server.status_code == 201
    assert server.json()["submission_id"] != public.json()["submission_id"]
    assert server_again.status_code == 200
    assert server_again.json() == server.json()
    assert seeded.svc.stored() == (2, 2)


def test_a_key_replays_for_24_hours_and_not_after(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    first = seeded.svc.public(key, data=FIELDS, idempotency_key="k-6")

    seeded.svc.clock.advance(DAY - 1)
    within = seeded.svc.public(key, data=FIELDS, idempotency_key="k-6")
    seeded.svc.clock.advance(1)
    after = seeded.svc.public(key, data={**FIELDS, "message": "New"}, idempotency_key="k-6")

    assert within.status_code == 200
    assert within.json() == first.json()
    assert after.status_code == 201
    assert after.json()["submission_id"] != first.json()["submission_id"]
    assert seeded.svc.stored() == (2, 2)


def test_a_new_record_replaces_an_expired_one(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    seeded.svc.public(key, data=FIELDS, idempotency_key="k-7")
    seeded.svc.clock.advance(DAY + 60)
    renewed = seeded.svc.public(key, data=FIELDS, idempotency_key="k-7")

    replay = seeded.svc.public(key, data=FIELDS, idempotency_key="k-7")

    assert renewed.status_code == 201
    assert replay.status_code == 200
    assert replay.json() == renewed.json()


def test_a_replay_counts_against_the_rate_limit_like_any_request(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    first = seeded.svc.public(key, data=FIELDS, idempotency_key="k-8")
    for _ in range(4):
        seeded.svc.public(key, data=FIELDS)

    replay = seeded.svc.public(key, data=FIELDS, idempotency_key="k-8")

    # The rate limit comes first in the processing order: a retry is a request too.
    assert first.status_code == 201
    assert_error(replay, "rate_limited")


def test_a_refused_request_leaves_its_key_free(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    refused = seeded.svc.public(key, data={"email": "not-an-address"}, idempotency_key="k-9")

    accepted = seeded.svc.public(key, data=FIELDS, idempotency_key="k-9")

    assert_error(refused, "validation_failed")
    assert accepted.status_code == 201


def _form() -> dict[str, str]:
    return {"content-type": "application/x-www-form-urlencoded"}
