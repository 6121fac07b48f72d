"""What a caller hands the pipeline, and what it gets back."""

from __future__ import annotations

from collections.abc import AsyncIterable

from attrs import frozen

from intake.domain.errors import Rejection
from intake.domain.model import FieldData, Form
from intake.domain.steps import Step


@frozen
class PublicTarget:
    """POST /f/{public_form_key}"""

    public_form_key: str


@frozen
class ServerTarget:
    """POST /v1/forms/{form_id}/submissions, with the Authorization header as sent."""

    form_id: str
    authorization: str | None


class BodyDeadline:
    """When a body must have arrived, in the reader's clock (the event loop's time); a
    form that takes files allows its bodies longer."""

    __slots__ = ("at", "start")

    def __init__(self, start: float, seconds: float) -> None:
        self.start = start
        self.at = start + seconds

    def allow(self, seconds: float) -> None:
        """At least `seconds` from the start of the request."""
        self.at = max(self.at, self.start + seconds)


@frozen
class RawBody:
    """A body still on the wire: read lazily, after the cheaper checks have passed."""

    content_type: str | None
    content_length: int | None
    chunks: AsyncIterable[bytes]
    deadline: BodyDeadline | None = None


@frozen
class FieldsBody:
    """Fields handed over in-process by a library user; the same limits apply."""

    fields: FieldData


@frozen
class SubmitRequest:
    target: PublicTarget | ServerTarget
    body: RawBody | FieldsBody
    client_ip: str
    origin: str | None = None
    idempotency_key: str | None = None
    challenge_token: str | None = None  # the X-Challenge-Token header
    # What Akismet judges a visitor by, when it is asked (docs/scoring.md, "Akismet").
    user_agent: str | None = None
    referrer: str | None = None  # the Referer header


@frozen
class Accepted:
    """A success: a new submission (201), a replay (200), or the honeypot's look-alike."""

    submission_id: str
    form: Form
    replayed: bool = False
    next_url: str | None = None

    @property
    def status(self) -> int:
        return 200 if self.replayed else 201


@frozen
class Refused:
    rejection: Rejection
    step: Step
    form: Form | None = None


Outcome = Accepted | Refused

CONFIRMATION = "Thank you. Your submission has been received."
