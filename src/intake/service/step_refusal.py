"""A refusal with the step of part 4.3 that answered it, and the block that tags it.

Inside `with step(Step.X):` an `IntakeError` is answered as step X's refusal, and so is
a transient storage failure (`StorageUnavailable`): the client may retry it. A refusal
already tagged passes through an enclosing step unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from intake.domain.errors import ErrorCode, IntakeError, Rejection, StorageUnavailable
from intake.domain.steps import Step

log = logging.getLogger("intake.pipeline")  # the steps' log is the pipeline's

# A transient storage failure: the client may retry at once, but not in a tight loop.
STORAGE_RETRY_AFTER = 1


class StepRefusal(Exception):  # noqa: N818 - an answer, not a programming error
    def __init__(self, step: Step, rejection: Rejection) -> None:
        super().__init__(f"{rejection.code.value} at step {step.name}")
        self.step = step
        self.rejection = rejection

    @classmethod
    def of(cls, step: Step, code: ErrorCode) -> StepRefusal:
        return cls(step, IntakeError.of(code).rejection)


@contextmanager
def step(current: Step) -> Iterator[None]:
    """Runs one step of part 4.3: what it refuses is refused at `current`."""
    try:
        yield
    except IntakeError as error:
        raise StepRefusal(current, error.rejection) from error
    except StorageUnavailable as error:
        log.warning("storage unavailable at step %s", current.name)
        rejection = Rejection(ErrorCode.SERVICE_UNAVAILABLE, retry_after=STORAGE_RETRY_AFTER)
        raise StepRefusal(current, rejection) from error
