"""Steps 11 and 12: what a submission's commit writes, and what its result answers.

Both are one transaction, so that N concurrent submissions against R remaining commit
exactly min(N, R): the quota refusal comes from the commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from intake.domain.controls import Controls
from intake.domain.errors import ErrorCode
from intake.domain.model import Form, OutboxEvent, Plan, Submission, Workspace
from intake.domain.quota import PlanTerms, ceiling, period, storage_ceiling
from intake.domain.steps import Step
from intake.ports.submissions import (
    CommitPlan,
    CommitResult,
    Committed,
    FormCheck,
    FormRefused,
    HoneypotHit,
    HoneypotResult,
    IdempotencyTaken,
    QuotaCharge,
    QuotaReached,
    StorageFull,
)
from intake.service.idempotency_claim import IdempotencyClaim
from intake.service.messages import Accepted, PublicTarget, ServerTarget
from intake.service.step_refusal import StepRefusal


def commit_plan(
    submission: Submission,
    event: OutboxEvent,
    *,
    workspace: Workspace,
    target: PublicTarget | ServerTarget,
    claim: IdempotencyClaim,
    plans: Mapping[Plan, PlanTerms],
    storage_limit: int,
    now: datetime,
) -> CommitPlan:
    return CommitPlan(
        submission=submission,
        event=event,
        idempotency=claim.record(submission.submission_id, now),
        quota=(
            QuotaCharge(workspace.workspace_id, period(now), ceiling(workspace, plans))
            if submission.status.uses_quota
            else None
        ),
        check=FormCheck(
            submission.form_id,
            target.public_form_key if isinstance(target, PublicTarget) else None,
        ),
        storage_limit=storage_ceiling(workspace, storage_limit),
    )


def honeypot_hit(plan: CommitPlan, now: datetime) -> HoneypotHit:
    """What a filled honeypot writes in place of `plan`: its form's count of the day and
    its key alone, under the same form check."""
    return HoneypotHit(
        form_id=plan.submission.form_id,
        day=now.astimezone(UTC).date().isoformat(),
        idempotency=plan.idempotency,
        check=plan.check,
    )


def answer(
    result: CommitResult | HoneypotResult,
    plan: CommitPlan,
    claim: IdempotencyClaim,
    form: Form,
    controls: Controls,
) -> Accepted:
    """The success a commit's result earns; a refusal it found is raised with the step
    whose check it is."""
    if isinstance(result, FormRefused):
        # Steps 1 and 2 may have read a cache: the commit found the form changed.
        disabled = result.code is ErrorCode.FORM_DISABLED
        raise StepRefusal.of(Step.CHECK_ENABLED if disabled else Step.RESOLVE_FORM, result.code)
    if isinstance(result, QuotaReached | StorageFull):
        # Full storage is answered as the quota is, whatever the spam score: a
        # sender must not tell a flagged submission by its answer.
        raise StepRefusal.of(Step.QUOTA, ErrorCode.QUOTA_EXCEEDED)
    if isinstance(result, IdempotencyTaken):
        return claim.replay(result.existing, form, controls)
    assert isinstance(result, Committed)
    return Accepted(plan.submission.submission_id, form, next_url=controls.next_url)
