"""A form's life past its creation: duplicated into a new form, and deleted
(docs/api.md, "Duplicating a form" and "Deleting a form").

A deletion is three steps, each one a rule a rerun resumes from: the form is marked
deleted and disabled at once (no lookup finds it, its public key is `form_not_found`);
its submissions are erased a batch at a time, each as an owner's deletion erases one
(Triage.delete: its files, its undelivered deliveries, and its
`submission.deleted` queued for the webhook endpoints; what it taught the spam filter
stays, as retention leaves it); then the form's row goes, with
its destinations, once nothing of it waits to be fanned out or delivered. What a
deletion leaves unfinished (a crash, a relay still delivering) `intake purge` finishes
(`Forms.finish_deletions`). `Forms` asks this module for the steps after the first."""

from __future__ import annotations

import logging

from attrs import frozen

from intake.domain.listing import ALL, SubmissionQuery
from intake.ports.store import Store
from intake.service.admin.errors import NotFoundError
from intake.service.admin.inputs import MAX_FORM_NAME
from intake.service.admin.triage import Triage

log = logging.getLogger("intake.forms")

# Submissions read per page while a deleted form's are erased: memory stays bounded
# whatever the form holds.
ERASE_BATCH = 500
# Deleted forms a purge finishes per page.
FINISH_BATCH = 100
COPY_SUFFIX = " (copy)"


@frozen
class FormDeletions:
    """What finishing the deletions did: submissions erased, forms removed, and forms
    still waiting for their events to be delivered."""

    erased: int = 0
    removed: int = 0
    waiting: int = 0


def copy_name(name: str) -> str:
    """The name a copy takes by default: the original's, marked as a copy, cut to fit."""
    return name[: MAX_FORM_NAME - len(COPY_SUFFIX)].rstrip() + COPY_SUFFIX


async def finish_deletions(store: Store, triage: Triage) -> FormDeletions:
    """Finishes every deletion left unfinished: the forms' submissions still stored
    are erased, and each form with nothing left to deliver is removed."""
    erased = removed = waiting = 0
    after = ""
    while True:
        form_ids = await store.forms.deleted(after, FINISH_BATCH)
        for form_id in form_ids:
            done = await finish_deletion(store, triage, form_id)
            erased += done.erased
            removed += done.removed
            waiting += done.waiting
        if len(form_ids) < FINISH_BATCH:
            return FormDeletions(erased, removed, waiting)
        after = form_ids[-1]


async def finish_deletion(store: Store, triage: Triage, form_id: str) -> FormDeletions:
    """The steps after the first for one form marked deleted."""
    erased = 0
    while True:
        page = await store.submissions.page(SubmissionQuery(form_id, ALL, limit=ERASE_BATCH))
        if not page.submissions:
            break
        for submission in page.submissions:
            try:
                # What it taught the spam filter stays (docs/scoring.md).
                await triage.delete(submission, unlearn=False)
            except NotFoundError:
                continue  # erased meanwhile by another hand
            erased += 1
    if await store.forms.remove_deleted(form_id):
        log.info("deleted form removed", extra={"form_id": form_id})
        return FormDeletions(erased, removed=1)
    return FormDeletions(erased, waiting=1)
