"""intake's side of the run, in process: each mail submitted to a form with the default
threshold through the real pipeline (Intake.open, the library), its status and spam score
read back, then taught through the owner-side service (bench/spam/owner.py).

Time is simulated on a fake clock: the corpus arrives at a fixed rate a day, each day's
submissions a second apart from the morning on, and in the errors mode the sweep that
settles untouched submissions runs at the end of each day. (Spread over the whole day, each
submission would find the process's cache of the statistics past its reload interval and
load it again whole: a few times a day on a real form, thousands of times in the run.)"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from attrs import frozen

from bench.spam import owner, timing
from bench.spam.corpus import Mail
from bench.spam.metrics import Scored
from bench.spam.modes import Mode
from intake.adapters.memory import FakeClock
from intake.config import Settings
from intake.domain.model import Plan, Submission, SubmissionStatus
from intake.entrypoints.library import Intake
from intake.service.admin import OwnerServices

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
ARRIVAL_GAP = 1.0  # seconds between two submissions of one simulated day
# Nothing of the run may be refused: the windows are still counted and checked, but none
# can fill, and a mail of the corpus (up to 200 KB of text) fits.
UNLIMITED_RATE = "1000000000/1"
TEXT_BYTES = 4 * 1024 * 1024
RUN_SETTINGS = {
    "INTAKE_RATE_LIMIT_PUBLIC_BURST": UNLIMITED_RATE,
    "INTAKE_RATE_LIMIT_PUBLIC_SUSTAINED": UNLIMITED_RATE,
    "INTAKE_RATE_LIMIT_PUBLIC_FORM": UNLIMITED_RATE,
    "INTAKE_MAX_BODY_BYTES": str(TEXT_BYTES),
    "INTAKE_MAX_FIELD_VALUE_BYTES": str(TEXT_BYTES),
    "INTAKE_MAX_TOTAL_TEXT_BYTES": str(TEXT_BYTES),
}
MONTHLY_LIMIT = 1_000_000_000
CLIENT_IP = "198.18.0.1"  # RFC 2544's benchmarking range: no one's address


class RunError(RuntimeError):
    """intake refused a mail of the corpus, or answered something the run cannot read."""


def settings() -> Settings:
    return Settings.from_env({"INTAKE_DATABASE_URL": "sqlite:///:memory:", **RUN_SETTINGS})


@frozen
class IntakeRun:
    """intake's verdicts on the corpus, in order, and what the run saw of its parts."""

    results: list[Scored]
    threshold: float
    corrections: int  # owner triage that changed a status
    settled: int  # taught by the rule for untouched submissions
    timed: timing.Timed | None  # the domain scoring call, per mail (full mode only)


@frozen
class _Form:
    services: OwnerServices
    key: str
    workspace_id: str
    threshold: float


async def _form(intake: Intake) -> _Form:
    services = intake.services
    workspace = await services.workspaces.create(
        "Spam bench", Plan.BUSINESS, monthly_limit=MONTHLY_LIMIT
    )
    form = await services.forms.create(workspace.workspace_id, name="Contact")
    return _Form(services, form.public_form_key, workspace.workspace_id, form.spam_threshold)


async def _submit(intake: Intake, form: _Form, mail: Mail) -> tuple[Scored, Submission]:
    result = await intake.submit(form.key, mail.fields, client_ip=CLIENT_IP)
    if not result.ok or result.submission_id is None:
        raise RunError(f"{mail.name} was refused: {result.status} {result.error_code}")
    submission = await form.services.submissions.get(result.submission_id)
    if submission.status not in (SubmissionStatus.ACCEPTED, SubmissionStatus.SPAM):
        raise RunError(f"{mail.name} was kept as {submission.status.value}")
    flagged = submission.status is SubmissionStatus.SPAM
    return Scored(mail.spam, submission.spam_score, flagged), submission


async def run(
    mails: Sequence[Mail],
    mode: Mode,
    *,
    per_day: int,
    progress: Callable[[int], None],
) -> IntakeRun:
    clock = FakeClock(START)
    results: list[Scored] = []
    corrections = 0
    settled = 0
    async with Intake.open(settings(), clock=clock) as intake:
        form = await _form(intake)
        # The rule's delay, as intake relay and intake purge read it (INTAKE_SPAM_SETTLE_DAYS).
        settle_after = timedelta(days=intake.runtime.settings.spam_settle_days)
        for index, mail in enumerate(mails):
            scored, submission = await _submit(intake, form, mail)
            results.append(scored)
            if mode is Mode.FULL or scored.flagged != mail.spam:
                await owner.teach(form.services, submission, spam=mail.spam)
                corrections += scored.flagged != mail.spam
            day, within = divmod(index + 1, per_day)
            clock.set(START + timedelta(days=day, seconds=within * ARRIVAL_GAP))
            if mode is Mode.ERRORS and within == 0:
                settled += await owner.settle_untouched(form.services, settle_after)
            progress(index + 1)
        timed = None
        if mode is Mode.FULL:
            timed = await timing.scoring_times(intake, form.workspace_id, form.threshold, mails)
    return IntakeRun(results, form.threshold, corrections, settled, timed)
