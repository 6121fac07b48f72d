"""The rule for submissions nobody touches (docs/scoring.md, "Submissions nobody
touches"): once older than INTAKE_SPAM_SETTLE_DAYS with no triage, an accepted submission
teaches ham and a spam one spam, as if its owner had confirmed it. Run by `intake purge`
(before the spam retention erases what it would teach) and by `intake relay`'s retention
sweep, a batch per transaction. Unverified submissions teach nothing: they failed a
challenge, which says nothing of their words."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from intake.domain.model import Submission, SubmissionStatus
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.lessons import lesson_of
from intake.domain.spam.model import Label
from intake.ports.spam_statistics import Settlement, SpamStatisticsRepository

log = logging.getLogger("intake.spam")

DEFAULT_SETTLE_DAYS = 14
SETTLE_BATCH = 500


def untouched_label(submission: Submission) -> Label:
    """What an owner's silence says: they left it where the filter put it."""
    return Label.SPAM if submission.status is SubmissionStatus.SPAM else Label.HAM


async def settle_untouched(
    spam: SpamStatisticsRepository,
    hasher: TokenHasher,
    now: datetime,
    after: timedelta,
    *,
    batch_size: int = SETTLE_BATCH,
) -> int:
    """Teaches every accepted and spam submission made before `now - after` that teaches
    nothing yet; a zero `after` settles nothing. Returns how many it taught. A triage
    between the read and the write wins (the store leaves that submission alone)."""
    if after <= timedelta(0):
        return 0
    taught = 0
    while True:
        batch = await spam.untaught(now - after, batch_size)
        settled = await spam.settle(
            [Settlement(s, lesson_of(s, untouched_label(s), hasher)) for s in batch]
        )
        taught += settled
        # A batch none of which could be settled would come back as it was: stop there.
        if len(batch) < batch_size or settled == 0:
            break
    if taught:
        log.info("untouched submissions taught to the spam filter", extra={"taught": taught})
    return taught
