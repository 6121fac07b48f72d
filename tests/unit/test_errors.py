"""The error table of spec part 7, checked against a copy taken from the spec itself."""

from __future__ import annotations

import pytest

from intake.domain.errors import (
    ERRORS,
    MANAGEMENT_ONLY,
    SUBMISSION_CODES,
    ErrorCode,
    IntakeError,
    Rejection,
)

# Copied from interface-spec.md part 7: code, HTTP status, public message.
SPEC_TABLE: list[tuple[str, int, str]] = [
    ("malformed_request", 400, "We could not read that request."),
    ("unsupported_content_type", 415, "That content type is not supported."),
    ("payload_too_large", 413, "That submission is too large."),
    ("validation_failed", 422, "Please check the highlighted fields."),
    ("unauthorized", 401, "This endpoint requires a valid API key."),
    ("origin_not_allowed", 403, "This form does not accept submissions from that address."),
    ("form_disabled", 403, "This form is not currently accepting submissions."),
    ("form_not_found", 404, "This form does not exist."),
    ("challenge_failed", 403, "We could not verify that submission. Please try again."),
    ("rate_limited", 429, "Too many submissions. Please wait a moment and try again."),
    ("quota_exceeded", 429, "This form has reached its submission limit."),
    (
        "idempotency_conflict",
        409,
        "That idempotency key was already used with a different submission.",
    ),
    ("service_unavailable", 503, "We could not accept that submission. Please try again."),
]


def test_the_table_holds_exactly_the_thirteen_codes_of_the_spec() -> None:
    assert len(SPEC_TABLE) == 13
    assert {code.value for code in SUBMISSION_CODES} == {code for code, _, _ in SPEC_TABLE}
    assert set(ERRORS) == set(ErrorCode)


def test_the_management_api_adds_its_two_codes_with_the_contracts_words() -> None:
    # management-api.md "Conventions", verbatim.
    assert {code: (ERRORS[code].status, ERRORS[code].message) for code in MANAGEMENT_ONLY} == {
        ErrorCode.FORBIDDEN: (403, "This key cannot do that."),
        ErrorCode.NOT_FOUND: (404, "Not found."),
    }
    assert set(SUBMISSION_CODES) | MANAGEMENT_ONLY == set(ErrorCode)


@pytest.mark.parametrize(("code", "status", "message"), SPEC_TABLE)
def test_each_code_has_the_status_and_public_message_of_the_spec(
    code: str, status: int, message: str
) -> None:
    spec = ERRORS[ErrorCode(code)]

    assert spec.code.value == code
    assert spec.status == status
    assert spec.message == message


def test_a_rejection_takes_its_status_and_message_from_the_table() -> None:
    rejection = Rejection(ErrorCode.RATE_LIMITED, retry_after=7)

    assert rejection.status == 429
    assert rejection.message == "Too many submissions. Please wait a moment and try again."
    assert rejection.retry_after == 7
    assert rejection.fields is None


def test_a_validation_rejection_carries_its_fields() -> None:
    rejection = Rejection(ErrorCode.VALIDATION_FAILED, fields={"email": "Bad."})

    assert rejection.status == 422
    assert rejection.fields == {"email": "Bad."}


def test_an_intake_error_carries_the_rejection_and_names_its_code() -> None:
    error = IntakeError.of(ErrorCode.QUOTA_EXCEEDED)

    assert error.rejection == Rejection(ErrorCode.QUOTA_EXCEEDED)
    assert str(error) == "quota_exceeded"


def test_a_download_refusal_keeps_the_code_and_status_in_words_about_the_link() -> None:
    bad_link = Rejection.download(ErrorCode.UNAUTHORIZED)
    missing = Rejection.download(ErrorCode.FORM_NOT_FOUND)
    unavailable = Rejection.download(ErrorCode.SERVICE_UNAVAILABLE)

    assert (bad_link.code, bad_link.status) == (ErrorCode.UNAUTHORIZED, 401)
    assert bad_link.message == "This download link is invalid or has expired."
    assert (missing.code, missing.status) == (ErrorCode.FORM_NOT_FOUND, 404)
    assert missing.message == "This file does not exist or is no longer available."
    assert (unavailable.code, unavailable.status) == (ErrorCode.SERVICE_UNAVAILABLE, 503)
    assert unavailable.message == "We could not fetch that file. Please try again."


def test_a_rejection_cannot_be_worded_as_another_code() -> None:
    with pytest.raises(ValueError, match="does not word"):
        Rejection(ErrorCode.FORM_NOT_FOUND, spec=ERRORS[ErrorCode.UNAUTHORIZED])
