"""What a submission teaches: the same tokens scoring read of it, so that teaching and
unlearning it count exactly what its score was made of."""

from __future__ import annotations

from intake.domain.model import FieldData, Submission
from intake.domain.scoring import findings
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.model import Label, Lesson
from intake.domain.spam.tokens import tokens


def token_hashes(
    hasher: TokenHasher, data: FieldData, subject: str | None, reply_to: str | None
) -> tuple[int, ...]:
    return hasher.hashes(tokens(data, subject, reply_to, findings(data, subject)))


def lesson_of(submission: Submission, label: Label, hasher: TokenHasher) -> Lesson:
    hashes = token_hashes(hasher, submission.data, submission.subject, submission.reply_to)
    return Lesson(submission.workspace_id, label, hashes)
