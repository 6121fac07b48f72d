"""The in-memory pipeline's tables, and the base its repositories reach them through."""

from __future__ import annotations

from datetime import UTC, datetime

from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import ApiKey, Form, Submission, Workspace
from intake.ports.submissions import OutboxRow


class Tables:
    def __init__(self) -> None:
        self.workspaces: dict[str, Workspace] = {}
        self.usage: dict[tuple[str, str], int] = {}
        self.storage: dict[str, int] = {}  # workspace id: bytes of its stored files
        self.forms: dict[str, Form] = {}
        self.form_by_key: dict[str, str] = {}
        self.keys: dict[str, ApiKey] = {}
        self.key_by_hash: dict[bytes, str] = {}
        self.submissions: dict[str, Submission] = {}
        self.outbox: dict[str, OutboxRow] = {}
        self.idempotency: dict[tuple[str, str], IdempotencyRecord] = {}
        self.honeypot_hits: dict[tuple[str, str], int] = {}  # (form_id, day): count
        self.closed = False


class Repository:
    """Reaches the tables only while the store is open, as a real store's connection."""

    def __init__(self, tables: Tables) -> None:
        self._tables = tables

    @property
    def _t(self) -> Tables:
        if self._tables.closed:
            raise StorageUnavailable("closed")
        return self._tables


def utc(moment: datetime) -> datetime:
    """As the SQL stores keep times: the moment, in UTC; a naive time is not guessed at."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"a stored time must be timezone-aware: {moment!r}")
    return moment.astimezone(UTC)
