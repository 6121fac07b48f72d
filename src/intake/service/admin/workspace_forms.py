"""A workspace's own forms, as an API key of that workspace reaches them: listed a page at
a time, newest first, and changed only when they are the workspace's (another's is not
found, exactly as a missing one)."""

from __future__ import annotations

from intake.domain.model import Form
from intake.service.admin.changes import FormChanges
from intake.service.admin.ownership import OwnershipAdmin
from intake.service.admin.short_lists import NO_TIME, Position, ShortPage, short_page


def _position(form: Form) -> Position:
    return (form.created_at or NO_TIME, form.form_id)


class WorkspaceFormAdmin(OwnershipAdmin):
    async def form_page(self, workspace_id: str, limit: int, cursor: str | None) -> ShortPage[Form]:
        """The workspace's forms after `cursor`, `limit` of them, newest first (a
        workspace's forms are few: read in one query)."""
        forms = await self._store.forms.list(workspace_id)
        return short_page(forms, _position, limit, cursor)

    async def workspace_form(self, workspace_id: str, form_id: str) -> Form:
        """The workspace's form `form_id` (OwnershipAdmin.owned_form)."""
        return await self.owned_form(workspace_id, form_id)

    async def update_owned_form(
        self, workspace_id: str, form_id: str, changes: FormChanges
    ) -> Form:
        await self.workspace_form(workspace_id, form_id)
        return await self.update_form(form_id, changes)

    async def rotate_owned_key(self, workspace_id: str, form_id: str) -> Form:
        await self.workspace_form(workspace_id, form_id)
        return await self.rotate_key(form_id)
