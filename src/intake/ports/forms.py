from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
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

    async def get(self, form_id: str) -> Form | None:
        """None for a form deleted (mark_deleted), as for every lookup of this port."""
        ...

    async def update(self, form: Form) -> None:
        """Saves every attribute, the public key included (a rotated key stops resolving)."""
        ...

    async def list(self, workspace_id: str | None = None) -> list[Form]: ...

    async def resolve_public_key(self, public_form_key: str) -> FormContext | None: ...

    async def resolve_id(self, form_id: str) -> FormContext | None: ...

    async def mark_deleted(self, form_id: str, at: datetime) -> bool:
        """Marks the form deleted at `at`, disables it and replaces its public key by
        one no request can carry, in one statement: from then on no lookup finds it, and
        a submission's commit under way is refused (`form_not_found` on the public
        route). False: no such live form (deleted already, or never there)."""
        ...

    async def deleted(self, after: str, limit: int) -> Sequence[str]:
        """Up to `limit` ids of forms marked deleted and not yet removed, in order, each
        after `after` ("" from the first)."""
        ...

    async def remove_deleted(self, form_id: str) -> bool:
        """Removes a form marked deleted, with its destinations, its honeypot tallies and
        the autoresponder's records, in one transaction, once it holds no submission, no
        event of it waits for its fan-out and no delivery of its events waits to be sent.
        False: it is not removable yet (or not marked deleted)."""
        ...
