"""Form management: creating, finding and changing forms, checking and previewing what
they mail, and rotating their public keys; as the operator reaches any form by id, and
as a workspace reaches its own (another's is not found, exactly as a missing one).
Deleting a form takes the steps form_lifecycle.py describes."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from attrs import evolve

from intake.domain.form_messages import FormMessages, Templates
from intake.domain.mail_templates import RenderTemplate, no_template_renderer
from intake.domain.model import Challenge, FieldRule, Form, FormMode
from intake.domain.uploads import UploadPolicy
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.forms import FormRepository
from intake.ports.store import Store
from intake.ports.templates import TemplateRenderer
from intake.service.admin.changes import FormChanges, UploadChanges
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.form_lifecycle import (
    FormDeletions,
    copy_name,
    finish_deletion,
    finish_deletions,
)
from intake.service.admin.inputs import (
    DEFAULT_FORM_NAME,
    UPLOADS,
    check_name,
    check_origins,
    check_redirect,
    check_retention_days,
    check_rules,
    check_threshold,
)
from intake.service.admin.message_changes import (
    MessageChanges,
    changed_templates,
    check_preview_kind,
    preview_mail,
    refuse_broken_templates,
    template_refusals,
)
from intake.service.admin.mint import IdMint
from intake.service.admin.ownership import Ownership
from intake.service.admin.short_lists import NO_TIME, Position, ShortPage, short_page
from intake.service.admin.triage import Triage
from intake.service.admin.workspaces import existing_workspace
from intake.service.template_threads import off_the_loop

if TYPE_CHECKING:
    from intake.domain.notifications import MailParts

log = logging.getLogger("intake.forms")


async def live_form(forms: FormRepository, form_id: str) -> Form:
    """The form (not deleted); NotFoundError when there is none: the one answer every
    service gives for a form id it does not know."""
    form = await forms.get(form_id)
    if form is None:
        raise NotFoundError(f"no form {form_id!r}")
    return form


def _position(form: Form) -> Position:
    return (form.created_at or NO_TIME, form.form_id)


class Forms:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        mint: IdMint,
        ownership: Ownership,
        triage: Triage,
        *,
        blobs: BlobStore | None = None,
        template_renderer: TemplateRenderer | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._mint = mint
        self._owned = ownership
        self._triage = triage
        self._blobs = blobs
        self._render_template: RenderTemplate = (
            no_template_renderer if template_renderer is None else template_renderer.render
        )

    def _upload_policy(
        self, changes: UploadChanges, current: UploadPolicy | None
    ) -> UploadPolicy | None:
        """The policy `changes` make of `current`. A form takes files only where a blob
        store keeps them: without one, every file sent to it would be refused."""
        policy = changes.apply(current)
        if policy is not None and self._blobs is None:
            raise AdminError(
                "no blob store is configured to keep uploaded files: set INTAKE_BLOB_URL "
                "(see docs/uploads.md), then turn uploads on",
                field=UPLOADS,
            )
        return policy

    async def create(
        self,
        workspace_id: str,
        *,
        name: str = DEFAULT_FORM_NAME,
        mode: FormMode = FormMode.PUBLIC,
        allowed_origins: Iterable[str] = (),
        rules: Iterable[FieldRule] = (),
        challenge: Challenge | None = None,
        redirect_url: str | None = None,
        spam_threshold: float | None = None,
        uploads: UploadChanges | None = None,
        retention_days: int | None = None,
        messages: MessageChanges | None = None,
    ) -> Form:
        """A new enabled form of the workspace, each setting checked (AdminError naming
        the one that is not right); a template given is rendered once first."""
        policy = self._upload_policy(uploads, None) if uploads is not None else None
        await existing_workspace(self._store.workspaces, workspace_id)
        form = Form(
            form_id=self._mint.id("frm"),
            workspace_id=workspace_id,
            public_form_key=self._mint.public_form_key(),
            name=check_name(name),
            mode=mode,
            enabled=True,
            allowed_origins=check_origins(allowed_origins),
            rules=check_rules(rules),
            challenge=challenge,
            redirect_url=check_redirect(redirect_url),
            created_at=self._clock.now(),
            uploads=policy,
            retention_days=check_retention_days(retention_days),
            messages=FormMessages()
            if messages is None
            else messages.apply(FormMessages(), check_name(name)),
        )
        if spam_threshold is not None:
            form = evolve(form, spam_threshold=check_threshold(spam_threshold))
        if messages is not None:
            given = messages.templates
            await self._refuse_broken_templates(form.messages.templates, given, form.name)
        await self._store.forms.add(form)
        return form

    async def get(self, form_id: str) -> Form:
        """Any workspace's form, by id (the operator's); NotFoundError when none."""
        return await live_form(self._store.forms, form_id)

    async def all(self, workspace_id: str | None = None) -> list[Form]:
        """The workspace's forms (every form, without one)."""
        return await self._store.forms.list(workspace_id)

    async def owned(self, workspace_id: str, form_id: str) -> Form:
        """The workspace's form `form_id` (ownership.py's rule)."""
        return await self._owned.form(workspace_id, form_id)

    async def page(self, workspace_id: str, limit: int, cursor: str | None) -> ShortPage[Form]:
        """The workspace's forms after `cursor`, `limit` of them, newest first (a
        workspace's forms are few: read in one query)."""
        forms = await self._store.forms.list(workspace_id)
        return short_page(forms, _position, limit, cursor)

    async def update(self, form_id: str, changes: FormChanges) -> Form:
        """The form with `changes`, each checked, saved."""
        form = changes.apply(await self.get(form_id))
        if changes.uploads is not None:
            form = evolve(form, uploads=self._upload_policy(changes.uploads, form.uploads))
        if changes.messages is not None:
            given = changes.messages.templates
            await self._refuse_broken_templates(form.messages.templates, given, form.name)
        await self._store.forms.update(form)
        return form

    async def preview_mail(
        self, form_id: str, kind: str, templates: Mapping[str, str | None] | None = None
    ) -> MailParts:
        """The mail `kind` ("notification" or "autoresponse") the form's templates make
        of a sample submission, `templates` (checked, not saved) in place of its own."""
        check_preview_kind(kind)
        form = await self.get(form_id)
        own = form.messages.templates
        if templates:
            own = changed_templates(own, templates)
            await self._refuse_broken_templates(own, templates, form.name)
        return await off_the_loop(preview_mail, own, form.name, kind, self._render_template)

    async def template_refusals(self, given: object) -> dict[str, str]:
        """Each template of `given` (a request's templates object, as sent) that does not
        render, by its field, with why: for an entry point that names every bad field of
        a request at once. Rendered off the event loop."""
        return await off_the_loop(template_refusals, given, self._render_template)

    async def _refuse_broken_templates(
        self, templates: Templates, given: Iterable[str], form_name: str
    ) -> None:
        """AdminError naming the first template `given` that does not render. Rendering
        blocks (each render is bounded in time by the renderer), so it runs on a thread:
        the event loop goes on answering everyone else meanwhile."""
        if not given:
            return
        check = partial(refuse_broken_templates, templates, tuple(given), form_name)
        await off_the_loop(check, self._render_template)

    async def update_owned(self, workspace_id: str, form_id: str, changes: FormChanges) -> Form:
        """`update` of the workspace's form."""
        await self.owned(workspace_id, form_id)
        return await self.update(form_id, changes)

    async def rotate_key(self, form_id: str) -> Form:
        """The form with a new public key: the old one is `form_not_found` from now on."""
        form = evolve(await self.get(form_id), public_form_key=self._mint.public_form_key())
        await self._store.forms.update(form)
        return form

    async def rotate_owned_key(self, workspace_id: str, form_id: str) -> Form:
        """`rotate_key` of the workspace's form."""
        await self.owned(workspace_id, form_id)
        return await self.rotate_key(form_id)

    async def duplicate(self, form_id: str, name: str | None = None) -> Form:
        """A new form with the settings of `form_id`: its mode, origins, rules, spam
        threshold, challenge (provider and secret), redirect, uploads, retention and
        messages; never its submissions, its destinations or its public key."""
        original = await self.get(form_id)
        copy = evolve(
            original,
            form_id=self._mint.id("frm"),
            public_form_key=self._mint.public_form_key(),
            name=check_name(copy_name(original.name) if name is None else name),
            enabled=True,
            created_at=self._clock.now(),
        )
        await self._store.forms.add(copy)
        log.info("form duplicated", extra={"form_id": copy.form_id, "from_form_id": form_id})
        return copy

    async def duplicate_owned(
        self, workspace_id: str, form_id: str, name: str | None = None
    ) -> Form:
        """`duplicate` of the workspace's form."""
        await self.owned(workspace_id, form_id)
        return await self.duplicate(form_id, name)

    async def delete(self, form_id: str) -> FormDeletions:
        """Deletes the form (form_lifecycle.py's three steps). NotFoundError: no such
        form, or deleted already."""
        form = await self.get(form_id)
        if not await self._store.forms.mark_deleted(form.form_id, self._clock.now()):
            raise NotFoundError(f"no form {form_id!r}")
        log.info("form deleted", extra={"form_id": form_id, "workspace_id": form.workspace_id})
        return await finish_deletion(self._store, self._triage, form_id)

    async def delete_owned(self, workspace_id: str, form_id: str) -> FormDeletions:
        """`delete` for the workspace's form."""
        await self.owned(workspace_id, form_id)
        return await self.delete(form_id)

    async def finish_deletions(self) -> FormDeletions:
        """Finishes every deletion left unfinished (`intake purge`): the forms'
        submissions still stored are erased, and each form with nothing left to
        deliver is removed."""
        return await finish_deletions(self._store, self._triage)
