"""Every triage teaches the spam filter (docs/scoring.md, "How triage teaches"): a release
teaches ham, a mark as spam spam, the status a submission has confirms it once with no
event, a reversal unlearns first, and an erasure (one, or a person's) unlearns; the rule
for submissions nobody touches, on a fake clock; an owner's history from an export."""

from __future__ import annotations

from datetime import timedelta

import pytest

from intake.adapters.memory import FakeClock, InMemoryStore, SeededIdSource
from intake.domain.model import FieldData, Submission, SubmissionStatus
from intake.domain.spam.history import PastMessage
from intake.domain.spam.model import Label
from intake.domain.triage import TriageStatus
from intake.ports.spam_statistics import SpamSummary
from intake.service.admin import NotFoundError, owner_services
from intake.service.spam_knowledge import SpamKnowledge
from intake.service.spam_settling import settle_untouched
from tests.contract.builders import FORM_ID, T0, WORKSPACE_ID, plan, seed, submission

pytestmark = pytest.mark.anyio

NOTHING = SpamSummary(0, 0, 0, 0, 0, 0)
DAY = timedelta(days=1)


class Triage:
    def __init__(self) -> None:
        self.store = InMemoryStore()
        self.clock = FakeClock(T0 + DAY)
        self.services = owner_services(self.store, self.clock, SeededIdSource())

    async def add(self, n: int, status: SubmissionStatus, **data: str) -> Submission:
        fields: FieldData = dict(data)
        sub = submission(n, status=status, data=fields or None, created_at=T0 + n * DAY)
        await self.store.submissions.commit(plan(sub))
        return sub

    async def now(self, sub: Submission) -> Submission:
        found = await self.store.submissions.get(sub.submission_id)
        assert found is not None
        return found

    async def summary(self) -> SpamSummary:
        return await self.services.spam.summary(WORKSPACE_ID)

    async def taught(self, sub: Submission) -> Label | None:
        return await self.store.spam.taught(sub.submission_id)

    async def events(self) -> int:
        return len(await self.store.submissions.outbox())


@pytest.fixture
async def triage() -> Triage:
    world = Triage()
    await seed(world.store)
    return world


async def test_marking_spam_teaches_spam_and_releasing_teaches_ham(triage: Triage) -> None:
    spam = await triage.add(1, SubmissionStatus.ACCEPTED, message="cheap pills")
    ham = await triage.add(2, SubmissionStatus.SPAM, message="a table for four")

    await triage.services.triage.mark_spam(spam)
    await triage.services.triage.release(ham)

    summary = await triage.summary()
    assert (summary.spam_messages, summary.ham_messages) == (1, 1)
    assert (summary.instance_spam_messages, summary.instance_ham_messages) == (1, 1)
    assert summary.tokens > 0
    assert await triage.taught(spam) is Label.SPAM
    assert await triage.taught(ham) is Label.HAM


async def test_releasing_an_unverified_submission_teaches_ham(triage: Triage) -> None:
    unverified = await triage.add(1, SubmissionStatus.UNVERIFIED, message="hello")

    await triage.services.triage.set_status(unverified, TriageStatus.ACCEPTED)

    assert await triage.taught(unverified) is Label.HAM


async def test_the_status_it_has_confirms_it_once_with_no_event(triage: Triage) -> None:
    accepted = await triage.add(1, SubmissionStatus.ACCEPTED, message="hello there")
    spam = await triage.add(2, SubmissionStatus.SPAM, message="cheap pills")
    events = await triage.events()

    for _ in range(3):
        assert await triage.services.triage.set_status(accepted, TriageStatus.ACCEPTED) == accepted
        assert await triage.services.triage.set_status(spam, TriageStatus.SPAM) == spam

    summary = await triage.summary()
    assert (summary.spam_messages, summary.ham_messages) == (1, 1)
    assert await triage.events() == events  # nothing queued
    assert await triage.now(accepted) == accepted  # nothing else changed
    assert await triage.now(spam) == spam


async def test_a_confirmation_read_before_another_triage_teaches_nothing(
    triage: Triage,
) -> None:
    # Two PATCHes at once: "accepted" reads the submission accepted (a confirmation)
    # while "spam" marks it. The mark wins, as if the confirmation came first: the filter
    # is taught what the submission is now, never the status it no longer has.
    sub = await triage.add(1, SubmissionStatus.ACCEPTED, message="cheap pills")
    read_before = await triage.now(sub)
    await triage.services.triage.mark_spam(read_before)

    answered = await triage.services.triage.set_status(read_before, TriageStatus.ACCEPTED)

    assert answered.status is SubmissionStatus.SPAM  # what it is, not what was read
    assert (await triage.now(sub)).status is SubmissionStatus.SPAM
    assert await triage.taught(sub) is Label.SPAM
    summary = await triage.summary()
    assert (summary.spam_messages, summary.ham_messages) == (1, 0)


async def test_a_reversal_unlearns_the_first_lesson(triage: Triage) -> None:
    sub = await triage.add(1, SubmissionStatus.ACCEPTED, message="hello there")
    await triage.services.triage.mark_spam(sub)
    after_spam = await triage.summary()

    await triage.services.triage.release(await triage.now(sub))

    summary = await triage.summary()
    assert (summary.spam_messages, summary.ham_messages) == (0, 1)
    assert summary.tokens == after_spam.tokens  # the same tokens, now counted as ham
    assert await triage.taught(sub) is Label.HAM


async def test_deleting_a_submission_unlearns_what_it_taught(triage: Triage) -> None:
    sub = await triage.add(1, SubmissionStatus.ACCEPTED, message="cheap pills")
    await triage.services.triage.mark_spam(sub)

    await triage.services.triage.delete(await triage.now(sub))

    assert await triage.summary() == NOTHING


async def test_a_persons_erasure_removes_their_contribution(triage: Triage) -> None:
    theirs = await triage.add(1, SubmissionStatus.SPAM, email="ada@example.com", message="hi")
    other = await triage.add(2, SubmissionStatus.SPAM, email="bob@example.com", message="yo")
    await triage.services.triage.release(theirs)
    await triage.services.triage.mark_spam(other)
    only_other = Triage()
    await seed(only_other.store)
    await only_other.services.triage.mark_spam(
        await only_other.add(2, SubmissionStatus.SPAM, email="bob@example.com", message="yo")
    )

    receipt = await triage.services.privacy.erase_person(WORKSPACE_ID, "ada@example.com")

    assert len(receipt.submissions) == 1
    assert await triage.summary() == await only_other.summary()


async def test_a_forms_deletion_leaves_what_its_submissions_taught(triage: Triage) -> None:
    # As retention's batch erasures do (docs/scoring.md): the lessons stay true for the
    # workspace's other forms. Only a person's erasure, or deleting one, unlearns.
    spam = await triage.add(1, SubmissionStatus.ACCEPTED, message="cheap pills")
    ham = await triage.add(2, SubmissionStatus.SPAM, message="a table for four")
    await triage.services.triage.mark_spam(spam)
    await triage.services.triage.release(ham)
    taught = await triage.summary()

    await triage.services.forms.delete(FORM_ID)

    assert await triage.store.submissions.get(spam.submission_id) is None
    assert await triage.summary() == taught


async def test_untouched_submissions_teach_their_status_after_the_settle_days(
    triage: Triage,
) -> None:
    accepted = await triage.add(1, SubmissionStatus.ACCEPTED, message="hello there")
    spam = await triage.add(2, SubmissionStatus.SPAM, message="cheap pills")
    unverified = await triage.add(3, SubmissionStatus.UNVERIFIED, message="who knows")
    recent = await triage.add(20, SubmissionStatus.ACCEPTED, message="just in")
    triage.clock.set(T0 + 17 * DAY)  # accepted and spam over 14 days old, recent not

    assert await triage.services.spam.settle_untouched(timedelta(days=14)) == 2

    assert await triage.taught(accepted) is Label.HAM
    assert await triage.taught(spam) is Label.SPAM
    assert await triage.taught(unverified) is None
    assert await triage.taught(recent) is None
    assert await triage.services.spam.settle_untouched(timedelta(days=14)) == 0  # once


async def test_a_triage_wins_over_the_untouched_rule(triage: Triage) -> None:
    sub = await triage.add(1, SubmissionStatus.ACCEPTED, message="cheap pills")
    await triage.services.triage.mark_spam(sub)
    triage.clock.set(T0 + 30 * DAY)

    assert await triage.services.spam.settle_untouched(timedelta(days=14)) == 0

    assert await triage.taught(sub) is Label.SPAM


async def test_a_zero_settle_days_teaches_nothing(triage: Triage) -> None:
    await triage.add(1, SubmissionStatus.ACCEPTED, message="hello")
    triage.clock.set(T0 + 300 * DAY)

    assert await triage.services.spam.settle_untouched(timedelta(0)) == 0


async def test_the_untouched_rule_goes_through_every_batch(triage: Triage) -> None:
    for n in range(1, 8):
        await triage.add(n, SubmissionStatus.ACCEPTED, message=f"hello {n}")
    hasher = await SpamKnowledge(triage.store.spam, triage.store.secrets, triage.clock).hasher()

    taught = await settle_untouched(
        triage.store.spam, hasher, T0 + 30 * DAY, timedelta(days=14), batch_size=3
    )

    assert taught == 7
    assert (await triage.summary()).ham_messages == 7


async def test_training_counts_an_owners_history(triage: Triage) -> None:
    spam = [PastMessage({"message": f"cheap pills {n}"}, None, None) for n in range(3)]
    ham = [PastMessage({"message": "a table for four"}, "Booking", "bob@example.org")]

    assert await triage.services.spam.train(WORKSPACE_ID, Label.SPAM, iter(spam)) == 3
    assert await triage.services.spam.train(WORKSPACE_ID, Label.HAM, ham) == 1

    summary = await triage.summary()
    assert (summary.spam_messages, summary.ham_messages) == (3, 1)


async def test_an_unknown_workspace_is_not_found(triage: Triage) -> None:
    with pytest.raises(NotFoundError):
        await triage.services.spam.summary("ws_nope")
    with pytest.raises(NotFoundError):
        await triage.services.spam.train("ws_nope", Label.SPAM, [])


async def test_a_submission_whose_data_is_gone_teaches_nothing(triage: Triage) -> None:
    # A forward-only form's, once forwarded: its data erased, the row kept.
    blank = submission(1, status=SubmissionStatus.SPAM, data={}, created_at=T0 + DAY)
    await triage.store.submissions.commit(plan(blank))

    await triage.services.triage.set_status(blank, TriageStatus.SPAM)  # confirmed: nothing to learn
    await triage.services.triage.release(await triage.now(blank))

    assert await triage.taught(blank) is None
    assert await triage.summary() == NOTHING
