"""A store in memory. Each method finishes without awaiting anything in between, so on
one event loop every call is atomic, as a transaction is in the real stores (but for
`new_events.wait`, which only waits)."""

from __future__ import annotations

from intake.adapters.memory.activity import InMemoryActivity
from intake.adapters.memory.deliveries import InMemoryDeliveries
from intake.adapters.memory.destinations import InMemoryDestinations
from intake.adapters.memory.notes import InMemoryNotes
from intake.adapters.memory.repositories import (
    InMemoryApiKeys,
    InMemoryForms,
    InMemorySubmissions,
    InMemoryWorkspaces,
)
from intake.adapters.memory.secrets import InMemorySealedValues, InMemorySecrets
from intake.adapters.memory.spam import InMemorySpamStatistics
from intake.adapters.memory.tables import Tables
from intake.adapters.memory.users import InMemoryUsers
from intake.domain.errors import StorageUnavailable
from intake.ports.submissions import OutboxRow


class InMemoryStore:
    def __init__(self) -> None:
        self._tables = Tables()
        self.workspaces = InMemoryWorkspaces(self._tables)
        self.forms = InMemoryForms(self._tables)
        self.api_keys = InMemoryApiKeys(self._tables)
        self.submissions = InMemorySubmissions(self._tables)
        self.destinations = InMemoryDestinations(self._tables)
        self.deliveries = InMemoryDeliveries(self._tables)
        self.secrets = InMemorySecrets(self._tables)
        self.sealed = InMemorySealedValues()
        self.users = InMemoryUsers(self._tables)
        self.notes = InMemoryNotes()
        self.activity = InMemoryActivity(self._tables)
        self.spam = InMemorySpamStatistics(self._tables)
        # Rung by this store's commits.
        self.new_events = self._tables.wakeup

    async def migrate(self) -> list[str]:
        return []

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
