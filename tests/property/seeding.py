"""What a property test sets up before it submits: workspaces, forms and API keys,
written straight into the in-memory pipeline's tables, as an owner would have made them."""

from __future__ import annotations

from collections.abc import Iterable

from attrs import evolve

from intake.adapters.memory import InMemoryPipelineStore
from intake.domain import ids
from intake.domain.model import (
    DEFAULT_SPAM_THRESHOLD,
    SUBMIT_ONLY,
    ApiKey,
    Challenge,
    FieldRule,
    Form,
    FormMode,
    Plan,
    Workspace,
)
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.service.admin.changes import WorkspaceChanges
from intake.service.admin.keys import CreatedKey
from intake.service.admin.mint import IdMint


class Seeding:
    def __init__(self, store: InMemoryPipelineStore, clock: Clock, id_source: IdSource) -> None:
        self._store = store
        self._clock = clock
        self._mint = IdMint(clock, id_source)

    async def workspace(
        self, plan: Plan = Plan.FREE, monthly_limit: int | None = None
    ) -> Workspace:
        workspace = Workspace(
            workspace_id=self._mint.id("ws"),
            name="Acme",
            plan=plan,
            monthly_limit=monthly_limit,
            created_at=self._clock.now(),
        )
        await self._store.workspaces.add(workspace)
        return workspace

    async def form(
        self,
        workspace_id: str,
        *,
        mode: FormMode = FormMode.PUBLIC,
        allowed_origins: Iterable[str] = (),
        rules: Iterable[FieldRule] = (),
        challenge: Challenge | None = None,
        spam_threshold: float = DEFAULT_SPAM_THRESHOLD,
    ) -> Form:
        """A new enabled form of the workspace."""
        form = Form(
            form_id=self._mint.id("frm"),
            workspace_id=workspace_id,
            public_form_key=self._mint.public_form_key(),
            name="Contact",
            mode=mode,
            allowed_origins=tuple(allowed_origins),
            rules=tuple(rules),
            spam_threshold=spam_threshold,
            challenge=challenge,
            created_at=self._clock.now(),
        )
        await self._store.forms.add(form)
        return form

    async def key(self, workspace_id: str) -> CreatedKey:
        """A submit-only API key of the workspace, and its secret."""
        secret = ids.api_key(self._mint.random_bytes(ids.API_KEY_RANDOM_BYTES))
        key = ApiKey(
            key_id=self._mint.id("key"),
            workspace_id=workspace_id,
            key_hash=ids.hash_secret(secret),
            prefix=secret[: len(ids.API_KEY_PREFIX) + 6],
            created_at=self._clock.now(),
            scopes=SUBMIT_ONLY,
        )
        await self._store.api_keys.add(key)
        return CreatedKey(key, secret)

    async def revoke(self, key_id: str) -> None:
        assert await self._store.api_keys.revoke(key_id, self._clock.now())

    async def disable(self, form_id: str) -> Form:
        form = await self._store.forms.get(form_id)
        assert form is not None
        disabled = evolve(form, enabled=False)
        await self._store.forms.update(disabled)
        return disabled

    async def change_workspace(self, workspace_id: str, changes: WorkspaceChanges) -> Workspace:
        return await self._save(changes.apply(await self._workspace(workspace_id)))

    async def set_active(self, workspace_id: str, active: bool) -> Workspace:
        return await self._save(evolve(await self._workspace(workspace_id), active=active))

    async def _workspace(self, workspace_id: str) -> Workspace:
        workspace = await self._store.workspaces.get(workspace_id)
        assert workspace is not None
        return workspace

    async def _save(self, workspace: Workspace) -> Workspace:
        await self._store.workspaces.update(workspace)
        return workspace
