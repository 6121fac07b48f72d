"""The ids the owner-side services make: one rule for every kind, so an id's shape is the
same whoever made it (domain/ids.py)."""

from __future__ import annotations

from intake.domain import ids
from intake.ports.clock import Clock
from intake.ports.ids import IdSource


class IdMint:
    def __init__(self, clock: Clock, id_source: IdSource) -> None:
        self._clock = clock
        self._ids = id_source

    def id(self, prefix: str) -> str:
        return ids.prefixed_id(prefix, self._ids.random_bytes(ids.ID_RANDOM_BYTES))

    def event_id(self) -> str:
        """An outbox event's id: sorted by the time it was made."""
        now_ms = int(self._clock.now().timestamp() * 1000)
        return ids.time_sorted_id("evt", now_ms, self._ids.random_bytes(ids.ID_RANDOM_BYTES))

    def public_form_key(self) -> str:
        return ids.public_form_key(self._ids.random_bytes(ids.ID_RANDOM_BYTES))

    def random_bytes(self, count: int) -> bytes:
        return self._ids.random_bytes(count)
