"""The learning filter's statistics, kept with everything else (docs/scoring.md).

Teaching a submission is idempotent and reversible: each submission row remembers what it
taught (`taught`: spam, ham or nothing). A lesson the row taught already changes nothing;
the other label unlearns the first before learning the second. The triage orders
(ports/triage.py) carry the submission's lesson, so the status change and the teaching
are one transaction. Every change counts in the workspace's scope and in the instance's
(INSTANCE), and bumps each scope's generation."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from attrs import frozen

from intake.domain.model import Submission, SubmissionStatus
from intake.domain.spam.model import Label, Lesson, Statistics


@frozen
class StatisticsChange:
    """A scope's statistics since a generation: its totals now, and the tokens changed
    after `since` (all of them when `since` is 0). A token whose counts fell to zero is
    listed with zero counts, so that a process drops it."""

    statistics: Statistics
    since: int


@frozen
class Settlement:
    """A submission nobody triaged, taught by the documented rule (docs/scoring.md,
    "Submissions nobody touches"): taught only if it still has `status` and teaches
    nothing yet."""

    submission: Submission
    lesson: Lesson


@frozen
class SpamSummary:
    """What `intake spam stats`, the API and the dashboard show of one workspace's filter."""

    spam_messages: int
    ham_messages: int
    tokens: int
    instance_spam_messages: int
    instance_ham_messages: int
    instance_tokens: int


class SpamStatisticsRepository(Protocol):
    async def changes(self, scope: str, since: int, limit: int) -> StatisticsChange:
        """`scope`'s statistics changed after generation `since` (0: all of them), at most
        `limit` tokens, the most used first when they do not all fit."""
        ...

    async def seed(self, lessons: Sequence[Lesson]) -> int:
        """Learns messages that are no submission of this instance (`intake spam train`):
        counted in one transaction, never unlearned one by one. Returns how many."""
        ...

    async def confirm(
        self, submission_id: str, lesson: Lesson, if_status: SubmissionStatus | None = None
    ) -> bool:
        """Teaches a submission its present status (a PATCH with the status it has): one
        transaction, idempotent as above. With `if_status` (the status the caller read),
        only while the submission still has it: a triage in between wins, and this
        teaches nothing. False when there is no such submission."""
        ...

    async def untaught(self, created_before: datetime, limit: int) -> list[Submission]:
        """Accepted and spam submissions made before `created_before` that teach nothing
        yet, oldest first: what the rule for untouched submissions may settle. One whose
        data is gone (a forward-only form's, once forwarded) has nothing to teach."""
        ...

    async def settle(self, settlements: Sequence[Settlement]) -> int:
        """Teaches each submission its lesson if it still has the status it had when read
        and still teaches nothing (a triage in between wins). Returns how many taught."""
        ...

    async def taught(self, submission_id: str) -> Label | None:
        """What a submission teaches now: for the tests and the dashboard."""
        ...

    async def summary(self, workspace_id: str) -> SpamSummary: ...
