"""A refusal with the step of part 4.3 that answered it.

The pipeline keeps the step it is at and hands what a step raised to `refusal`: an
`IntakeError` is answered as that step's refusal, and so is a transient storage failure
(`StorageUnavailable`): the client may retry it. A refusal already tagged, or any other
error, is not touched.
"""

from __future__ import annotations

import logging

from intake.domain.errors import ErrorCode, IntakeError, Rejection, StorageUnavailable
from intake.domain.steps import Step

log = logging.getLogger("intake.pipeline")  # the steps' log is the pipeline's

# A transient storage failure: the client may retry at once, but not in a tight loop.
STORAGE_RETRY_AFTER = 1

# What `refusal` answers for: the pipeline catches these, and only these, at each step.
STEP_ERRORS = (IntakeError, StorageUnavailable)


class StepRefusal(Exception):  # noqa: N818 - an answer, not a programming error
    def __init__(self, step: Step, rejection: Rejection) -> None:
        super().__init__(f"{rejection.code.value} at step {step.name}")
        self.step = step
        self.rejection = rejection

    @classmethod
    def of(cls, step: Step, code: ErrorCode) -> StepRefusal:
        return cls(step, IntakeError.of(code).rejection)


def refusal(current: Step, error: IntakeError | StorageUnavailable) -> StepRefusal:
    """What `error`, raised at step `current`, answers: that step's refusal."""
    if isinstance(error, IntakeError):
        return StepRefusal(current, error.rejection)
    log.warning("storage unavailable at step %s", current.name)
    rejection = Rejection(ErrorCode.SERVICE_UNAVAILABLE, retry_after=STORAGE_RETRY_AFTER)
    return StepRefusal(current, rejection)
