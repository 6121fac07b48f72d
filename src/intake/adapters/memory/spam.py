"""The learning filter's statistics in memory (SpamStatisticsRepository), and the teaching
the triage orders do (memory/triage.py). Each call finishes without an `await`, so it is
atomic on its event loop, as a transaction is."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from intake.adapters.memory.tables import Repository, Tables, utc
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.spam.model import INSTANCE, Label, Lesson, Statistics, pack
from intake.domain.spam.teaching import Tally, delta
from intake.ports.spam_statistics import Settlement, SpamSummary, StatisticsChange

_SETTLED = (SubmissionStatus.ACCEPTED, SubmissionStatus.SPAM)


def write(tables: Tables, tally: Tally) -> None:
    """Each scope's generation one more, its counts never below zero; the tokens changed
    take the new generation (a token falling to zero keeps its row)."""
    for scope, changes in tally.scopes():
        spam_messages, ham_messages, generation = tables.spam_scopes.get(scope, (0, 0, 0))
        generation += 1
        tables.spam_scopes[scope] = (
            max(spam_messages + changes.spam_messages, 0),
            max(ham_messages + changes.ham_messages, 0),
            generation,
        )
        rows = tables.spam_tokens.setdefault(scope, {})
        for token, spam, ham in changes.sorted_tokens():
            was_spam, was_ham, _ = rows.get(token, (0, 0, 0))
            rows[token] = (max(was_spam + spam, 0), max(was_ham + ham, 0), generation)


def teach(tables: Tables, submission: Submission, lesson: Lesson, label: Label | None) -> None:
    """Makes the submission teach `label` (None: nothing, as an erasure does)."""
    tally = Tally()
    tally.add(
        submission.workspace_id,
        lesson.hashes,
        delta(tables.taught.get(submission.submission_id), label),
    )
    write(tables, tally)
    if label is None:
        tables.taught.pop(submission.submission_id, None)
    else:
        tables.taught[submission.submission_id] = label


def _most_used(rows: list[tuple[int, int, int]], limit: int) -> list[tuple[int, int, int]]:
    if len(rows) <= limit:
        return rows
    return sorted(rows, key=lambda row: (-(row[1] + row[2]), row[0]))[:limit]


class InMemorySpamStatistics(Repository):
    async def changes(self, scope: str, since: int, limit: int) -> StatisticsChange:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        spam_messages, ham_messages, generation = self._t.spam_scopes.get(scope, (0, 0, 0))
        rows = self._t.spam_tokens.get(scope, {})
        if since == 0:  # a full load: the tokens that count
            chosen = [(t, s, h) for t, (s, h, _) in rows.items() if s or h]
        else:  # a delta: zero rows too, so that a process drops them
            chosen = [(t, s, h) for t, (s, h, g) in rows.items() if g > since]
        tokens = {t: pack(s, h) for t, s, h in _most_used(chosen, limit)}
        return StatisticsChange(
            Statistics(spam_messages, ham_messages, tokens, generation), since=since
        )

    async def seed(self, lessons: Sequence[Lesson]) -> int:
        tally = Tally()
        for lesson in lessons:
            tally.add(lesson.workspace_id, lesson.hashes, delta(None, lesson.label))
        write(self._t, tally)
        return len(lessons)

    async def confirm(
        self, submission_id: str, lesson: Lesson, if_status: SubmissionStatus | None = None
    ) -> bool:
        submission = self._t.submissions.get(submission_id)
        if submission is None:
            return False
        if if_status is not None and submission.status is not if_status:
            return True  # another triage came in between: it decided
        teach(self._t, submission, lesson, lesson.label)
        return True

    async def untaught(self, created_before: datetime, limit: int) -> list[Submission]:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        cutoff = utc(created_before)
        due = [
            s
            for s in self._t.submissions.values()
            if s.status in _SETTLED
            and s.created_at < cutoff
            and s.submission_id not in self._t.taught
            and s.data
        ]
        due.sort(key=lambda s: (s.created_at, s.submission_id))
        return due[:limit]

    async def settle(self, settlements: Sequence[Settlement]) -> int:
        tables = self._t
        tally = Tally()
        taught: dict[str, Label] = {}
        for settlement in sorted(settlements, key=lambda s: s.submission.submission_id):
            now = tables.submissions.get(settlement.submission.submission_id)
            if (
                now is None
                or now.status is not settlement.submission.status
                or now.submission_id in tables.taught
                or now.submission_id in taught
            ):
                continue
            label = settlement.lesson.label
            tally.add(now.workspace_id, settlement.lesson.hashes, delta(None, label))
            taught[now.submission_id] = label
        write(tables, tally)
        tables.taught.update(taught)
        return len(taught)

    async def taught(self, submission_id: str) -> Label | None:
        if submission_id not in self._t.submissions:
            return None
        return self._t.taught.get(submission_id)

    async def summary(self, workspace_id: str) -> SpamSummary:
        own = self._summed(workspace_id)
        instance = self._summed(INSTANCE)
        return SpamSummary(*own, *instance)

    def _summed(self, scope: str) -> tuple[int, int, int]:
        spam_messages, ham_messages, _ = self._t.spam_scopes.get(scope, (0, 0, 0))
        rows = self._t.spam_tokens.get(scope, {}).values()
        return spam_messages, ham_messages, sum(1 for s, h, _ in rows if s or h)
