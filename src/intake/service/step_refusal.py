"""A refusal with the step of part 4.3 that answered it, and the block that tags it.

Inside `with step(Step.X):` an `IntakeError` is answered as step X's refusal, and so is
a transient storage failure (`StorageUnavailable`): the client may retry it. A refusal
already tagged passes through an enclosing step unchanged.
"""

from __future__ import annotations

import logging

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


class _StepBlock:
    """The block of one step. It holds nothing of a request: one per step serves them
    all, and a submission's dozen blocks cost no generator or allocation each."""

    __slots__ = ("_current",)

    def __init__(self, current: Step) -> None:
        self._current = current

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, *_: object
    ) -> None:
        if error is None:  # the step went through, as most do
            return
        if isinstance(error, IntakeError):
            raise StepRefusal(self._current, error.rejection) from error
        if isinstance(error, StorageUnavailable):
            log.warning("storage unavailable at step %s", self._current.name)
            rejection = Rejection(ErrorCode.SERVICE_UNAVAILABLE, retry_after=STORAGE_RETRY_AFTER)
            raise StepRefusal(self._current, rejection) from error


_BLOCKS = {each: _StepBlock(each) for each in Step}


def step(current: Step) -> _StepBlock:
    """Runs one step of part 4.3: what it refuses is refused at `current`."""
    return _BLOCKS[current]
