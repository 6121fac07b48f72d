"""Form management: creating, finding and changing forms, and rotating their public keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from attrs import evolve

from intake.domain import ids
from intake.domain.form_messages import FormMessages, Templates
from intake.domain.model import Challenge, FieldRule, Form, FormMode
from intake.domain.uploads import UploadPolicy
from intake.service.admin.changes import FormChanges, UploadChanges
from intake.service.admin.errors import AdminError, NotFoundError
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
from intake.service.admin.workspaces import WorkspaceAdmin
from intake.service.template_threads import off_the_loop

if TYPE_CHECKING:
    from intake.domain.notifications import MailParts


class FormAdmin(WorkspaceAdmin):
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

    async def create_form(
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
        policy = self._upload_policy(uploads, None) if uploads is not None else None
        await self.workspace(workspace_id)
        form = Form(
            form_id=self._id("frm"),
            workspace_id=workspace_id,
            public_form_key=ids.public_form_key(self._ids.random_bytes(ids.ID_RANDOM_BYTES)),
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

    async def form(self, form_id: str) -> Form:
        form = await self._store.forms.get(form_id)
        if form is None:
            raise NotFoundError(f"no form {form_id!r}")
        return form

    async def forms(self, workspace_id: str | None = None) -> list[Form]:
        return await self._store.forms.list(workspace_id)

    async def update_form(self, form_id: str, changes: FormChanges) -> Form:
        form = changes.apply(await self.form(form_id))
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
        form = await self.form(form_id)
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

    async def rotate_key(self, form_id: str) -> Form:
        form = evolve(
            await self.form(form_id),
            public_form_key=ids.public_form_key(self._ids.random_bytes(ids.ID_RANDOM_BYTES)),
        )
        await self._store.forms.update(form)
        return form
