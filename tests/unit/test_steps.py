"""The processing order of spec part 4.3, as data."""

from __future__ import annotations

from intake.domain.errors import SUBMISSION_CODES, ErrorCode
from intake.domain.steps import STEP_CODES, Step


def test_the_steps_run_in_the_order_of_the_spec() -> None:
    assert [step.name for step in sorted(Step)] == [
        "RESOLVE_FORM",
        "CHECK_ENABLED",
        "RATE_LIMIT",
        "ORIGIN_POLICY",
        "CONTENT_TYPE_AND_SIZE",
        "PARSE",
        "HONEYPOT",
        "CHALLENGE",
        "VALIDATE",
        "SCORE",
        "QUOTA",
        "COMMIT",
    ]
    assert [int(step) for step in sorted(Step)] == list(range(1, 13))


def test_every_step_lists_the_codes_it_may_answer_with() -> None:
    assert set(STEP_CODES) == set(Step)


def test_every_code_of_the_table_is_answered_by_some_step() -> None:
    assert set().union(*STEP_CODES.values()) == set(SUBMISSION_CODES)


def test_the_rate_limit_comes_before_the_quota_and_the_origin_before_the_body() -> None:
    assert Step.RATE_LIMIT < Step.QUOTA
    assert Step.ORIGIN_POLICY < Step.CONTENT_TYPE_AND_SIZE < Step.PARSE


def test_the_steps_whose_outcome_must_not_show_answer_with_no_code_of_their_own() -> None:
    # A filled honeypot answers only what its commit, like any request's, answers.
    assert STEP_CODES[Step.HONEYPOT] == frozenset()
    assert STEP_CODES[Step.SCORE] == frozenset()


def test_each_spec_condition_is_answered_at_its_step() -> None:
    assert ErrorCode.FORM_NOT_FOUND in STEP_CODES[Step.RESOLVE_FORM]
    assert ErrorCode.FORM_DISABLED in STEP_CODES[Step.CHECK_ENABLED]
    assert ErrorCode.RATE_LIMITED in STEP_CODES[Step.RATE_LIMIT]
    assert ErrorCode.ORIGIN_NOT_ALLOWED in STEP_CODES[Step.ORIGIN_POLICY]
    assert ErrorCode.UNSUPPORTED_CONTENT_TYPE in STEP_CODES[Step.CONTENT_TYPE_AND_SIZE]
    assert ErrorCode.PAYLOAD_TOO_LARGE in STEP_CODES[Step.CONTENT_TYPE_AND_SIZE]
    assert ErrorCode.MALFORMED_REQUEST in STEP_CODES[Step.PARSE]
    assert ErrorCode.CHALLENGE_FAILED in STEP_CODES[Step.CHALLENGE]
    assert ErrorCode.VALIDATION_FAILED in STEP_CODES[Step.VALIDATE]
    assert ErrorCode.QUOTA_EXCEEDED in STEP_CODES[Step.QUOTA]
    assert ErrorCode.SERVICE_UNAVAILABLE in STEP_CODES[Step.COMMIT]
