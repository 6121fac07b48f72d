"""The pipeline's ports in memory: forms and keys as read, the commit with its
idempotency, quota and storage checks. Each method finishes without awaiting anything in
between, so on one event loop every call is atomic, as a transaction is in the real
stores. Property tests drive the whole pipeline on it, thousands of requests a second;
the contract suite holds it to the SQL stores on those ports."""

from __future__ import annotations

from intake.adapters.memory.repositories import InMemoryApiKeys, InMemoryForms, InMemoryWorkspaces
from intake.adapters.memory.submissions import InMemorySubmissions
from intake.adapters.memory.tables import Tables
from intake.domain.errors import StorageUnavailable
from intake.ports.submissions import OutboxRow


class InMemoryPipelineStore:
    def __init__(self) -> None:
        self._tables = Tables()
        self.workspaces = InMemoryWorkspaces(self._tables)
        self.forms = InMemoryForms(self._tables)
        self.api_keys = InMemoryApiKeys(self._tables)
        self.submissions = InMemorySubmissions(self._tables)

    @property
    def closed(self) -> bool:
        return self._tables.closed

    async def ping(self) -> None:
        if self.closed:
            raise StorageUnavailable("closed")

    async def close(self) -> None:
        self._tables.closed = True

    # For tests: what is stored, without going through a port.
    def count_submissions(self) -> int:
        return len(self._tables.submissions)

    def count_outbox(self) -> int:
        return len(self._tables.outbox)

    def outbox_for(self, submission_id: str) -> list[OutboxRow]:
        return [r for r in self._tables.outbox.values() if r.event.submission_id == submission_id]
