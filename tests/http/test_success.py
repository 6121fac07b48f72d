"""What a success looks like and what it leaves behind (spec parts 1, 3, 4 and 6;
decisions.md "Outcomes that must not disclose anything" and "Reserved control fields")."""

from __future__ import annotations

import re
from typing import Any

import httpx2
import pytest

from intake.domain.model import Challenge, ChallengeProvider, EventType, SubmissionStatus
from intake.ports.challenge import ChallengeVerdict
from tests.http.conftest import Seeded, assert_error

# Also on PostgreSQL (tests/http/conftest.py): the group commit (PostgreSQL's batched
# intake_commit) and what it writes.
pytestmark = pytest.mark.postgres_smoke

FIELDS = {"name": "Ada", "email": "ada@example.com", "message": "Hello"}
SPAM = {
    "name": "Ada",
    "message": "Buy viagra now! Click here: http://a.example http://b.example http://c.example",
}
CONFIRMATION = "Thank you. Your submission has been received."
# URL-safe, with the prefix; 29 characters carry 48 bits of time and 96 random bits.
SUBMISSION_ID = re.compile(r"^sub_[0-9a-z]{29}$")


def _assert_success(response: httpx2.Response, status: int = 201) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert set(body) == {"ok", "submission_id", "message"}
    assert body["ok"] is True
    assert body["message"] == CONFIRMATION
    submission_id = body["submission_id"]
    assert isinstance(submission_id, str)
    assert SUBMISSION_ID.match(submission_id), submission_id
    return submission_id


def test_a_new_submission_answers_201_with_an_opaque_id_and_the_confirmation(
    seeded: Seeded,
) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)

    submission_id = _assert_success(response)
    stored = seeded.svc.submission(submission_id)
    assert stored.form_id == seeded.form.form_id
    assert stored.data == FIELDS
    assert stored.status is SubmissionStatus.ACCEPTED


def test_a_success_discloses_no_score_recipient_or_provider(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, data=SPAM)

    _assert_success(response)
    text = response.text.lower()
    for hint in ("spam", "score", "flag", "turnstile", "status"):
        assert hint not in text


def test_submission_ids_are_unique_and_sort_by_time(seeded: Seeded) -> None:
    ids = []
    for _ in range(20):
        response = seeded.svc.server(seeded.form.form_id, seeded.key.secret, data=FIELDS)
        ids.append(_assert_success(response))
        seeded.svc.clock.advance(0.01)

    assert len(set(ids)) == 20
    assert ids == sorted(ids)


def test_every_201_stores_exactly_one_submission_and_one_outbox_row(seeded: Seeded) -> None:
    for count in range(1, 4):
        response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)
        submission_id = _assert_success(response)

        assert seeded.svc.stored() == (count, count)
        (row,) = seeded.svc.outbox(submission_id)
        assert row.event.event_type is EventType.CREATED
        assert row.event.payload["data"] == FIELDS


def test_the_server_endpoint_answers_the_same_shape(seeded: Seeded) -> None:
    response = seeded.svc.server(seeded.form.form_id, seeded.key.secret, json=FIELDS)

    submission_id = _assert_success(response)
    assert seeded.svc.submission(submission_id).data == FIELDS


def test_repeated_names_are_kept_as_a_list_in_order(seeded: Seeded) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key,
        content=b"tags=b&name=Ada&tags=a&tags=c",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )

    stored = seeded.svc.submission(_assert_success(response))
    assert stored.data == {"tags": ["b", "a", "c"], "name": "Ada"}


def test_repeated_multipart_names_are_kept_as_a_list_too(seeded: Seeded) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key,
        files=[("tags", (None, b"a")), ("tags", (None, b"b"))],
    )

    assert seeded.svc.submission(_assert_success(response)).data == {"tags": ["a", "b"]}


def test_a_json_array_of_scalars_is_a_repeated_name(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, json={"tags": ["a", "b"]})

    assert seeded.svc.submission(_assert_success(response)).data == {"tags": ["a", "b"]}


# -- control fields ---------------------------------------------------------------------


def test_control_fields_are_not_stored_as_data(seeded: Seeded) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key,
        data={
            **FIELDS,
            "_subject": "Hello there",
            "_replyto": "reply@example.com",
            "_next": "https://elsewhere.example/done",
            "_custom": "dropped",
            "cf-turnstile-response": "token",
        },
    )

    stored = seeded.svc.submission(_assert_success(response))
    assert stored.data == FIELDS
    assert stored.subject == "Hello there"
    assert stored.reply_to == "reply@example.com"
    (row,) = seeded.svc.outbox(stored.submission_id)
    assert row.event.payload["data"] == FIELDS
    assert row.event.payload["subject"] == "Hello there"


def test_without_replyto_the_email_field_is_the_reply_address(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)

    assert seeded.svc.submission(_assert_success(response)).reply_to == "ada@example.com"


def test_without_replyto_or_email_there_is_no_reply_address(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, data={"name": "Ada"})

    assert seeded.svc.submission(_assert_success(response)).reply_to is None


# -- the honeypot -----------------------------------------------------------------------


def test_a_filled_honeypot_looks_like_a_success_and_stores_nothing(seeded: Seeded) -> None:
    real = seeded.svc.public(seeded.form.public_form_key, data=FIELDS)
    used = seeded.svc.used(seeded.workspace.workspace_id)

    bot = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "_gotcha": "http://spam.example"}
    )

    _assert_success(real)
    fake_id = _assert_success(bot)
    assert fake_id != real.json()["submission_id"]
    assert _comparable_headers(bot) == _comparable_headers(real)
    assert len(bot.content) == len(real.content)
    assert seeded.svc.stored() == (1, 1)
    assert seeded.svc.used(seeded.workspace.workspace_id) == used
    assert seeded.svc.run(seeded.svc.store.submissions.get, fake_id) is None


def test_an_empty_honeypot_is_not_a_bot(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, data={**FIELDS, "_gotcha": ""})

    _assert_success(response)
    assert seeded.svc.stored() == (1, 1)


def test_a_honeypot_is_caught_on_the_server_endpoint_too(seeded: Seeded) -> None:
    response = seeded.svc.server(
        seeded.form.form_id, seeded.key.secret, json={**FIELDS, "_gotcha": "x"}
    )

    _assert_success(response)
    assert seeded.svc.stored() == (0, 0)


def test_a_honeypot_is_caught_before_the_challenge_and_validation(seeded: Seeded) -> None:
    seeded.svc.update_form(
        seeded.form.form_id, challenge=Challenge(ChallengeProvider.TURNSTILE, "secret")
    )

    response = seeded.svc.public(
        seeded.form.public_form_key, data={"email": "not-an-address", "_gotcha": "x"}
    )

    _assert_success(response)
    assert seeded.fake_challenge.calls == []


def test_a_honeypot_retry_with_its_key_is_answered_like_a_real_replay(seeded: Seeded) -> None:
    key = seeded.form.public_form_key
    bot = {**FIELDS, "_gotcha": "x"}
    first = seeded.svc.public(key, data=bot, idempotency_key="h-1")

    retry = seeded.svc.public(key, data=bot, idempotency_key="h-1")

    assert _assert_success(retry, status=200) == _assert_success(first)
    assert retry.headers["idempotent-replayed"] == "true"
    assert seeded.svc.stored() == (0, 0)


def test_a_honeypot_key_reused_with_another_payload_conflicts_like_a_real_one(
    seeded: Seeded,
) -> None:
    key = seeded.form.public_form_key
    first = seeded.svc.public(key, data={**FIELDS, "_gotcha": "x"}, idempotency_key="h-2")

    _assert_success(first)
    response = seeded.svc.public(key, data={**FIELDS, "_gotcha": "y"}, idempotency_key="h-2")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_conflict"
    assert seeded.svc.stored() == (0, 0)


def _comparable_headers(response: httpx2.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k not in ("x-request-id",)}


# -- spam and unverified submissions ----------------------------------------------------


def test_spam_is_kept_for_review_flagged_and_answered_as_a_success(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, data=SPAM)

    stored = seeded.svc.submission(_assert_success(response))
    assert stored.status is SubmissionStatus.SPAM
    (row,) = seeded.svc.outbox(stored.submission_id)
    assert row.event.event_type is EventType.FLAGGED
    assert seeded.svc.used(seeded.workspace.workspace_id) == 0


def test_an_unreachable_challenge_provider_keeps_the_submission_unverified(
    seeded: Seeded,
) -> None:
    seeded.svc.update_form(
        seeded.form.form_id, challenge=Challenge(ChallengeProvider.TURNSTILE, "secret")
    )
    seeded.fake_challenge.verdicts["token"] = ChallengeVerdict.UNAVAILABLE

    response = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "cf-turnstile-response": "token"}
    )

    stored = seeded.svc.submission(_assert_success(response))
    assert stored.status is SubmissionStatus.UNVERIFIED
    (row,) = seeded.svc.outbox(stored.submission_id)
    assert row.event.event_type is EventType.FLAGGED
    assert seeded.svc.used(seeded.workspace.workspace_id) == 0


def test_an_unverified_submission_is_still_validated(seeded: Seeded) -> None:
    seeded.svc.update_form(
        seeded.form.form_id, challenge=Challenge(ChallengeProvider.TURNSTILE, "secret")
    )
    seeded.fake_challenge.verdicts["token"] = ChallengeVerdict.UNAVAILABLE

    response = seeded.svc.public(
        seeded.form.public_form_key,
        data={"email": "not-an-address", "cf-turnstile-response": "token"},
    )

    assert_error(response, "validation_failed")


# -- service_unavailable ----------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["public", "server"])
def test_a_failed_commit_is_503_with_retry_after_and_leaves_nothing(
    seeded: Seeded, endpoint: str
) -> None:
    seeded.svc.fail_commits(1)

    response = _send(seeded, endpoint, "k-1")

    assert_error(response, "service_unavailable")
    assert int(response.headers["retry-after"]) >= 1
    assert seeded.svc.stored() == (0, 0)
    assert seeded.svc.used(seeded.workspace.workspace_id) == 0


def test_a_retry_after_a_failed_commit_succeeds_once(seeded: Seeded) -> None:
    seeded.svc.fail_commits(1)
    failed = _send(seeded, "public", "k-2")

    retry = _send(seeded, "public", "k-2")
    again = _send(seeded, "public", "k-2")

    assert failed.status_code == 503
    submission_id = _assert_success(retry)
    assert _assert_success(again, status=200) == submission_id
    assert seeded.svc.stored() == (1, 1)


def _send(seeded: Seeded, endpoint: str, key: str) -> httpx2.Response:
    if endpoint == "public":
        return seeded.svc.public(seeded.form.public_form_key, data=FIELDS, idempotency_key=key)
    return seeded.svc.server(
        seeded.form.form_id, seeded.key.secret, data=FIELDS, idempotency_key=key
    )
