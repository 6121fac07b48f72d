"""The processing order of a submission (spec part 4.3), as data.

`intake.service.pipeline` walks these steps top to bottom; the first failure ends the
request. Each step lists the codes it may answer with.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from intake.domain.errors import ErrorCode


class Step(enum.IntEnum):
    RESOLVE_FORM = 1
    CHECK_ENABLED = 2
    RATE_LIMIT = 3
    ORIGIN_POLICY = 4
    CONTENT_TYPE_AND_SIZE = 5
    PARSE = 6
    HONEYPOT = 7
    CHALLENGE = 8
    VALIDATE = 9
    SCORE = 10
    QUOTA = 11
    COMMIT = 12


_UNAVAILABLE = ErrorCode.SERVICE_UNAVAILABLE

# A step that reads or writes storage (or the shared rate-limit windows) may also answer
# service_unavailable when that storage fails transiently.
STEP_CODES: Mapping[Step, frozenset[ErrorCode]] = {
    # Authentication belongs to resolving: a form is only found through a valid route.
    Step.RESOLVE_FORM: frozenset({ErrorCode.FORM_NOT_FOUND, ErrorCode.UNAUTHORIZED, _UNAVAILABLE}),
    Step.CHECK_ENABLED: frozenset({ErrorCode.FORM_DISABLED}),
    Step.RATE_LIMIT: frozenset({ErrorCode.RATE_LIMITED, _UNAVAILABLE}),
    Step.ORIGIN_POLICY: frozenset({ErrorCode.ORIGIN_NOT_ALLOWED}),
    Step.CONTENT_TYPE_AND_SIZE: frozenset(
        {ErrorCode.UNSUPPORTED_CONTENT_TYPE, ErrorCode.PAYLOAD_TOO_LARGE}
    ),
    # Parsing a streamed multipart body meets the size limits as it goes; the replay
    # check reads the idempotency records.
    Step.PARSE: frozenset(
        {
            ErrorCode.MALFORMED_REQUEST,
            ErrorCode.PAYLOAD_TOO_LARGE,
            ErrorCode.IDEMPOTENCY_CONFLICT,
            _UNAVAILABLE,
        }
    ),
    # A filled honeypot answers nothing of its own: it goes on to a commit of its own
    # (HoneypotHit), whose answers are the commit's, as a real submission's are.
    Step.HONEYPOT: frozenset(),
    Step.CHALLENGE: frozenset({ErrorCode.CHALLENGE_FAILED}),
    Step.VALIDATE: frozenset({ErrorCode.VALIDATION_FAILED}),
    Step.SCORE: frozenset(),
    Step.QUOTA: frozenset({ErrorCode.QUOTA_EXCEEDED}),
    Step.COMMIT: frozenset({_UNAVAILABLE, ErrorCode.IDEMPOTENCY_CONFLICT}),
}
