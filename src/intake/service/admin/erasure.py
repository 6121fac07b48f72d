"""An erasure on request (docs/privacy.md, "Answering an erasure request"): every
submission of a workspace that holds a person's address, erased as an owner's deletion
erases one (Triage.delete), and a receipt that tells what went without
telling what it held."""

from __future__ import annotations

import logging
from collections import Counter
from datetime import datetime

from attrs import frozen

from intake.domain.model import Submission
from intake.domain.privacy import holds_address
from intake.domain.validation import email_key, email_spellings
from intake.ports.clock import Clock
from intake.ports.store import Store
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.triage import Triage
from intake.service.admin.workspaces import existing_workspace

log = logging.getLogger("intake.erasure")

EMAIL = "email"


@frozen
class ErasedSubmission:
    """What a receipt names of a submission: ids and its time, nothing it held."""

    submission_id: str
    form_id: str
    created_at: datetime


@frozen
class ErasureReceipt:
    """What an erasure did (or, `dry_run`, would do) at `at`: the submissions it erased,
    oldest first."""

    workspace_id: str
    dry_run: bool
    at: datetime
    submissions: tuple[ErasedSubmission, ...]

    @property
    def forms(self) -> dict[str, int]:
        """Each form's count of erased submissions, by form id."""
        return dict(sorted(Counter(s.form_id for s in self.submissions).items()))


class Privacy:
    def __init__(self, store: Store, clock: Clock, triage: Triage) -> None:
        self._store = store
        self._clock = clock
        self._triage = triage

    async def erase_person(
        self, workspace_id: str, email: str, *, dry_run: bool = False
    ) -> ErasureReceipt:
        """Erases every submission of the workspace whose reply-to or any field value is
        `email` (compared as domain/validation.py's email_key), each in a transaction of
        its own, with its `submission.deleted` queued; a dry run erases nothing. An
        address that is not one is refused (AdminError on `email`)."""
        key = email_key(email)
        if key is None:
            raise AdminError("Please enter a valid email address.", field=EMAIL)
        await existing_workspace(self._store.workspaces, workspace_id)
        candidates = await self._store.submissions.with_address(
            workspace_id, email_spellings(email)
        )
        found = [s for s in candidates if holds_address(s, key)]
        at = self._clock.now()
        if dry_run:
            return ErasureReceipt(workspace_id, True, at, tuple(_named(s) for s in found))
        erased = [_named(s) for s in found if await self._erase_one(s)]
        # The autoresponder's hash of the address would outlive the submissions by up
        # to two hours (until `intake purge`): it goes with them.
        forgotten = await self._store.submissions.forget_autoresponses(workspace_id, email)
        log.info(
            "erasure on request",
            extra={
                "workspace_id": workspace_id,
                "submissions": len(erased),
                "autoresponse_records": forgotten,
            },
        )
        return ErasureReceipt(workspace_id, False, at, tuple(erased))

    async def _erase_one(self, submission: Submission) -> bool:
        """False: it was gone already (erased meanwhile by another hand)."""
        try:
            await self._triage.delete(submission)
        except NotFoundError:
            return False
        return True


def _named(submission: Submission) -> ErasedSubmission:
    return ErasedSubmission(submission.submission_id, submission.form_id, submission.created_at)
