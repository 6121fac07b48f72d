from __future__ import annotations

from typing import Protocol

from attrs import frozen

from intake.domain.model import Form, Workspace


@frozen
class FormContext:
    """A form with its workspace: what the hot path needs, in one lookup."""

    form: Form
    workspace: Workspace


class FormRepository(Protocol):
    async def add(self, form: Form) -> None: ...

    async def get(self, form_id: str) -> Form | None: ...

    async def update(self, form: Form) -> None:
        """Saves every attribute, the public key included (a rotated key stops resolving)."""
        ...

    async def list(self, workspace_id: str | None = None) -> list[Form]: ...

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None: ...

    async def resolve_id(self, form_id: str) -> FormContext | None: ...
