"""A form's life past its creation: duplicated into a new form, and deleted
(docs/api.md, "Duplicating a form" and "Deleting a form").

A deletion is three steps, each one a rule a rerun resumes from: the form is marked
deleted and disabled at once (no lookup finds it, its public key is `form_not_found`);
its submissions are erased a batch at a time, each as an owner's deletion erases one
(TriageAdmin.delete_submission: its files, its undelivered deliveries, and its
`submission.deleted` queued for the webhook endpoints; what it taught the spam filter
stays, as retention leaves it); then the form's row goes, with
its destinations, once nothing of it waits to be fanned out or delivered. What a
deletion leaves unfinished (a crash, a relay still delivering) `intake purge` finishes
(`finish_form_deletions`)."""

from __future__ import annotations

import logging

from attrs import evolve, frozen

from intake.domain import ids
from intake.domain.listing import ALL, SubmissionQuery
from intake.domain.model import Form
from intake.service.admin.errors import NotFoundError
from intake.service.admin.inputs import MAX_FORM_NAME, check_name
from intake.service.admin.ownership import owned, workspace_of
from intake.service.admin.triage import TriageAdmin

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


class FormLifecycleAdmin(TriageAdmin):
    async def _live_form(self, form_id: str) -> Form:
        form = await self._store.forms.get(form_id)
        if form is None:
            raise NotFoundError(f"no form {form_id!r}")
        return form

    async def _owned_form(self, workspace_id: str, form_id: str) -> Form:
        return await owned(workspace_id, form_id, "form", self._store.forms.get, workspace_of)

    async def duplicate_form(self, form_id: str, name: str | None = None) -> Form:
        """A new form with the settings of `form_id`: its mode, origins, rules, spam
        threshold, challenge (provider and secret), redirect, uploads, retention and
        messages; never its submissions, its destinations or its public key."""
        original = await self._live_form(form_id)
        copy = evolve(
            original,
            form_id=self._id("frm"),
            public_form_key=ids.public_form_key(self._ids.random_bytes(ids.ID_RANDOM_BYTES)),
            name=check_name(copy_name(original.name) if name is None else name),
            enabled=True,
            created_at=self._clock.now(),
        )
        await self._store.forms.add(copy)
        log.info("form duplicated", extra={"form_id": copy.form_id, "from_form_id": form_id})
        return copy

    async def duplicate_owned_form(
        self, workspace_id: str, form_id: str, name: str | None = None
    ) -> Form:
        await self._owned_form(workspace_id, form_id)
        return await self.duplicate_form(form_id, name)

    async def delete_form(self, form_id: str) -> FormDeletions:
        """Deletes the form (the module's three steps). NotFoundError: no such form, or
        deleted already."""
        form = await self._live_form(form_id)
        if not await self._store.forms.mark_deleted(form.form_id, self._clock.now()):
            raise NotFoundError(f"no form {form_id!r}")
        log.info("form deleted", extra={"form_id": form_id, "workspace_id": form.workspace_id})
        return await self._finish_deletion(form_id)

    async def delete_owned_form(self, workspace_id: str, form_id: str) -> FormDeletions:
        await self._owned_form(workspace_id, form_id)
        return await self.delete_form(form_id)

    async def finish_form_deletions(self) -> FormDeletions:
        """Finishes every deletion left unfinished: the forms' submissions still stored
        are erased, and each form with nothing left to deliver is removed."""
        erased = removed = waiting = 0
        after = ""
        while True:
            form_ids = await self._store.forms.deleted(after, FINISH_BATCH)
            for form_id in form_ids:
                done = await self._finish_deletion(form_id)
                erased += done.erased
                removed += done.removed
                waiting += done.waiting
            if len(form_ids) < FINISH_BATCH:
                return FormDeletions(erased, removed, waiting)
            after = form_ids[-1]

    async def _finish_deletion(self, form_id: str) -> FormDeletions:
        erased = 0
        while True:
            page = await self._store.submissions.page(
                SubmissionQuery(form_id, ALL, limit=ERASE_BATCH)
            )
            if not page.submissions:
                break
            for submission in page.submissions:
                try:
                    # What it taught the spam filter stays (docs/scoring.md).
                    await self.delete_submission(submission, unlearn=False)
                except NotFoundError:
                    continue  # erased meanwhile by another hand
                erased += 1
        if await self._store.forms.remove_deleted(form_id):
            log.info("deleted form removed", extra={"form_id": form_id})
            return FormDeletions(erased, removed=1)
        return FormDeletions(erased, waiting=1)
