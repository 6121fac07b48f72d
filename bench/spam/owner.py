"""What an owner does to a submission in the run, through the owner-side service the
management API's PATCH calls: releasing teaches ham, marking spam teaches spam, and the
status it already has confirms it (teaches it, changes nothing else)."""

from __future__ import annotations

from datetime import timedelta

from intake.domain.model import Submission
from intake.domain.triage import TriageStatus
from intake.service.admin import OwnerServices


async def teach(services: OwnerServices, submission: Submission, *, spam: bool) -> None:
    """Sets the submission's true status, as `PATCH /v1/submissions/{id}` would."""
    await services.triage.set_status(
        submission, TriageStatus.SPAM if spam else TriageStatus.ACCEPTED
    )


async def settle_untouched(services: OwnerServices, after: timedelta) -> int:
    """The rule for submissions nobody touched `after` their arrival, as the relay's
    sweep and `intake purge` apply it, at the clock's present time: how many it taught."""
    return await services.spam.settle_untouched(after)
