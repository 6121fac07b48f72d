"""The error table of the interface specification (part 7), held once, as data, and the
wording the file download route gives some of its codes."""

from __future__ import annotations

import enum
from collections.abc import Mapping

from attrs import evolve, field, frozen


class ErrorCode(enum.StrEnum):
    MALFORMED_REQUEST = "malformed_request"
    UNSUPPORTED_CONTENT_TYPE = "unsupported_content_type"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    VALIDATION_FAILED = "validation_failed"
    UNAUTHORIZED = "unauthorized"
    ORIGIN_NOT_ALLOWED = "origin_not_allowed"
    FORM_DISABLED = "form_disabled"
    FORM_NOT_FOUND = "form_not_found"
    CHALLENGE_FAILED = "challenge_failed"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXCEEDED = "quota_exceeded"
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    SERVICE_UNAVAILABLE = "service_unavailable"
    # The management API's own (management-api.md), never a submission endpoint's.
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"


# The codes only the management API gives; the submission endpoints' table is the rest.
MANAGEMENT_ONLY = frozenset({ErrorCode.FORBIDDEN, ErrorCode.NOT_FOUND})
SUBMISSION_CODES = tuple(code for code in ErrorCode if code not in MANAGEMENT_ONLY)


@frozen
class ErrorSpec:
    code: ErrorCode
    status: int
    message: str


ERRORS: Mapping[ErrorCode, ErrorSpec] = {
    spec.code: spec
    for spec in (
        ErrorSpec(ErrorCode.MALFORMED_REQUEST, 400, "We could not read that request."),
        ErrorSpec(ErrorCode.UNSUPPORTED_CONTENT_TYPE, 415, "That content type is not supported."),
        ErrorSpec(ErrorCode.PAYLOAD_TOO_LARGE, 413, "That submission is too large."),
        ErrorSpec(ErrorCode.VALIDATION_FAILED, 422, "Please check the highlighted fields."),
        ErrorSpec(ErrorCode.UNAUTHORIZED, 401, "This endpoint requires a valid API key."),
        ErrorSpec(
            ErrorCode.ORIGIN_NOT_ALLOWED,
            403,
            "This form does not accept submissions from that address.",
        ),
        ErrorSpec(
            ErrorCode.FORM_DISABLED, 403, "This form is not currently accepting submissions."
        ),
        ErrorSpec(ErrorCode.FORM_NOT_FOUND, 404, "This form does not exist."),
        ErrorSpec(
            ErrorCode.CHALLENGE_FAILED,
            403,
            "We could not verify that submission. Please try again.",
        ),
        ErrorSpec(
            ErrorCode.RATE_LIMITED,
            429,
            "Too many submissions. Please wait a moment and try again.",
        ),
        ErrorSpec(ErrorCode.QUOTA_EXCEEDED, 429, "This form has reached its submission limit."),
        ErrorSpec(
            ErrorCode.IDEMPOTENCY_CONFLICT,
            409,
            "That idempotency key was already used with a different submission.",
        ),
        ErrorSpec(
            ErrorCode.SERVICE_UNAVAILABLE,
            503,
            "We could not accept that submission. Please try again.",
        ),
        ErrorSpec(ErrorCode.FORBIDDEN, 403, "This key cannot do that."),
        ErrorSpec(ErrorCode.NOT_FOUND, 404, "Not found."),
    )
}


# Any request that is no submission (a management call, a dashboard page, a file), when
# the service could not answer it: the table's 503 speaks of a submission.
REQUEST_UNAVAILABLE = ErrorSpec(
    ErrorCode.SERVICE_UNAVAILABLE, 503, "We could not answer that request. Please try again."
)


# A download link is no submission, and no API key opens a file: the download route's
# refusals keep the table's codes and statuses, so clients branch on them as anywhere,
# with messages that speak of the link and the file.
DOWNLOAD_ERRORS: Mapping[ErrorCode, ErrorSpec] = {
    spec.code: spec
    for spec in (
        ErrorSpec(ErrorCode.UNAUTHORIZED, 401, "This download link is invalid or has expired."),
        ErrorSpec(
            ErrorCode.FORM_NOT_FOUND, 404, "This file does not exist or is no longer available."
        ),
        ErrorSpec(
            ErrorCode.SERVICE_UNAVAILABLE, 503, "We could not fetch that file. Please try again."
        ),
    )
}


# The management API answers requests, not submissions: its refusals keep the table's
# codes and statuses, in words of its own where the table's speak of a submission. Any
# refusal the API gives with one of these codes (a key's rate limit, a throttle on test
# sends, a body too large, a database out of reach, a fault) takes these words.
MANAGEMENT_ERRORS: Mapping[ErrorCode, ErrorSpec] = {
    spec.code: spec
    for spec in (
        ErrorSpec(ErrorCode.PAYLOAD_TOO_LARGE, 413, "That request is too large."),
        ErrorSpec(
            ErrorCode.RATE_LIMITED, 429, "Too many requests. Please wait a moment and try again."
        ),
        REQUEST_UNAVAILABLE,
    )
}


# /metrics and /readyz are the operator's, not a submission's: their refusals keep the
# table's codes and statuses, in words that say what was refused.
METRICS_UNAUTHORIZED = ErrorSpec(
    ErrorCode.UNAUTHORIZED, 401, "This endpoint requires the operator's metrics token."
)
NOT_READY = ErrorSpec(
    ErrorCode.SERVICE_UNAVAILABLE, 503, "The service is not ready yet. Please try again shortly."
)
# A suspended workspace's keys may read, but a request that would change something or
# send something is refused: the table's `forbidden`, in words that say why.
WORKSPACE_SUSPENDED = ErrorSpec(
    ErrorCode.FORBIDDEN, 403, "This workspace is suspended: it can change and send nothing."
)


@frozen
class Rejection:
    """Why a request was refused: a code of the table, plus what the code carries. `spec`
    is the table's row for the code unless a route words it in its own way."""

    code: ErrorCode
    fields: Mapping[str, str] | None = None
    retry_after: int | None = None
    spec: ErrorSpec = field(kw_only=True)

    @spec.default
    def _spec(self) -> ErrorSpec:
        return ERRORS[self.code]

    @spec.validator
    def _same_code(self, _: object, spec: ErrorSpec) -> None:
        if spec.code is not self.code or spec.status != ERRORS[self.code].status:
            raise ValueError(f"{spec} does not word {self.code}")

    @classmethod
    def download(cls, code: ErrorCode, *, retry_after: int | None = None) -> Rejection:
        """A refusal of the file download route, in its own words where it has them."""
        spec = DOWNLOAD_ERRORS.get(code, ERRORS[code])
        return cls(code, retry_after=retry_after, spec=spec)

    def worded(self, words: Mapping[ErrorCode, ErrorSpec]) -> Rejection:
        """This refusal in a route's own words (`MANAGEMENT_ERRORS`), where they have
        some for its code."""
        spec = words.get(self.code)
        return self if spec is None else evolve(self, spec=spec)

    @property
    def status(self) -> int:
        return self.spec.status

    @property
    def message(self) -> str:
        return self.spec.message


class IntakeError(Exception):
    """A refusal raised from deep inside a step; carries the rejection to the pipeline."""

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(rejection.code.value)
        self.rejection = rejection

    @classmethod
    def of(
        cls,
        code: ErrorCode,
        *,
        fields: Mapping[str, str] | None = None,
        retry_after: int | None = None,
    ) -> IntakeError:
        return cls(Rejection(code, fields=fields, retry_after=retry_after))


class StorageUnavailable(Exception):  # noqa: N818 - a condition, not a programming error
    """A transient storage failure: the request may be retried. Adapters raise only this."""
