"""The in-memory workspaces, forms and API keys: what the pipeline reads (a form with
its workspace, a key by hash, the quota and storage used), and the few writes that seed
them."""

from __future__ import annotations

from datetime import datetime

from attrs import evolve

from intake.adapters.memory.tables import Repository
from intake.domain.model import ApiKey, Form, Workspace
from intake.ports.forms import FormContext


class InMemoryWorkspaces(Repository):
    async def add(self, workspace: Workspace) -> None:
        self._t.workspaces[workspace.workspace_id] = workspace

    async def get(self, workspace_id: str) -> Workspace | None:
        return self._t.workspaces.get(workspace_id)

    async def update(self, workspace: Workspace) -> None:
        # As an SQL UPDATE: an unknown id changes nothing (it is not an insert).
        if workspace.workspace_id in self._t.workspaces:
            self._t.workspaces[workspace.workspace_id] = workspace

    async def list(self) -> list[Workspace]:
        return sorted(self._t.workspaces.values(), key=lambda w: w.workspace_id)

    async def usage(self, workspace_id: str, period: str) -> int:
        return self._t.usage.get((workspace_id, period), 0)

    async def storage_used(self, workspace_id: str) -> int:
        return self._t.storage.get(workspace_id, 0)


class InMemoryForms(Repository):
    async def add(self, form: Form) -> None:
        self._t.forms[form.form_id] = form
        self._t.form_by_key[form.public_form_key] = form.form_id

    async def get(self, form_id: str) -> Form | None:
        return self._t.forms.get(form_id)

    async def update(self, form: Form) -> None:
        old = self._t.forms.get(form.form_id)
        if old is None:
            return  # as an SQL UPDATE: an unknown id changes nothing
        del self._t.form_by_key[old.public_form_key]
        self._t.forms[form.form_id] = form
        self._t.form_by_key[form.public_form_key] = form.form_id

    async def list(self, workspace_id: str | None = None) -> list[Form]:
        forms = [f for f in self._t.forms.values() if workspace_id in (None, f.workspace_id)]
        return sorted(forms, key=lambda f: f.form_id)

    def _context(self, form_id: str | None) -> FormContext | None:
        form = self._t.forms.get(form_id) if form_id is not None else None
        if form is None:
            return None
        return FormContext(form, self._t.workspaces[form.workspace_id])

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None:
        return self._context(self._t.form_by_key.get(public_form_key))

    async def resolve_id(self, form_id: str) -> FormContext | None:
        return self._context(form_id)


class InMemoryApiKeys(Repository):
    async def add(self, key: ApiKey) -> None:
        self._t.keys[key.key_id] = key
        self._t.key_by_hash[key.key_hash] = key.key_id

    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None:
        key_id = self._t.key_by_hash.get(key_hash)
        return self._t.keys.get(key_id) if key_id is not None else None

    async def get(self, key_id: str) -> ApiKey | None:
        return self._t.keys.get(key_id)

    async def revoke(self, key_id: str, when: datetime) -> bool:
        key = self._t.keys.get(key_id)
        if key is None:
            return False
        if key.revoked_at is None:
            self._t.keys[key_id] = evolve(key, revoked_at=when)
        return True

    async def list(self, workspace_id: str) -> list[ApiKey]:
        keys = [k for k in self._t.keys.values() if k.workspace_id == workspace_id]
        return sorted(keys, key=lambda k: (k.created_at, k.key_id))
