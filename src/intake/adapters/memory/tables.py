"""The in-memory store's tables, and the base its repositories reach them through."""

from __future__ import annotations

from datetime import UTC, datetime

from intake.adapters.autoresponse_rules import QueuedAutoresponse
from intake.adapters.relay_wakeup import RelayWakeup
from intake.domain.chat import ChatDestination
from intake.domain.deliveries import (
    Delivery,
    DeliveryAttempt,
    NotificationRecipient,
    WebhookEndpoint,
)
from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import ApiKey, Form, Submission, Workspace
from intake.domain.spam.model import Label
from intake.ports.submissions import OutboxRow


class Tables:
    def __init__(self) -> None:
        self.workspaces: dict[str, Workspace] = {}
        self.usage: dict[tuple[str, str], int] = {}
        self.storage: dict[str, int] = {}  # workspace id: bytes of its stored files
        self.forms: dict[str, Form] = {}
        self.form_by_key: dict[str, str] = {}
        # Form id: when its owner deleted it; the row stays until nothing of it is left
        # to erase or deliver (memory/form_removal.py), found by no lookup meanwhile.
        self.deleted_forms: dict[str, datetime] = {}
        self.keys: dict[str, ApiKey] = {}
        self.key_by_hash: dict[bytes, str] = {}
        self.submissions: dict[str, Submission] = {}
        # Submission id: the month (YYYY-MM) it was charged to its workspace's quota, as
        # the SQL stores' submissions.charged_period: set by a commit of an accepted
        # submission and by a release; kept when marked spam. Counted only while the
        # submission is stored.
        self.charged: dict[str, str] = {}
        self.outbox: dict[str, OutboxRow] = {}
        self.idempotency: dict[tuple[str, str], IdempotencyRecord] = {}
        self.honeypot_hits: dict[tuple[str, str], int] = {}  # (form_id, day): count
        self.endpoints: dict[str, WebhookEndpoint] = {}
        self.recipients: dict[str, NotificationRecipient] = {}
        self.recipient_links: dict[str, str] = {}  # a pending link's hash: its recipient id
        self.chats: dict[str, ChatDestination] = {}
        # Autoresponse id: the confirmation queued (memory/form_messages.py).
        self.autoresponses: dict[str, QueuedAutoresponse] = {}
        # Submission id: when its forward-only erasure was queued.
        self.forward_erasures: dict[str, datetime] = {}
        self.deliveries: dict[str, Delivery] = {}
        self.leases: dict[str, datetime] = {}  # delivery id: leased until
        self.attempts: dict[str, list[DeliveryAttempt]] = {}  # delivery id: oldest first
        self.secrets: dict[str, bytes] = {}
        # The learning filter (memory/spam.py): what each submission teaches now, as the
        # SQL stores' submissions.taught (read only while the submission is stored); each
        # scope's (spam messages, ham messages, generation); each scope's tokens'
        # (spam, ham, generation), zero rows kept as the SQL stores keep them.
        self.taught: dict[str, Label] = {}
        self.spam_scopes: dict[str, tuple[int, int, int]] = {}
        self.spam_tokens: dict[str, dict[int, tuple[int, int, int]]] = {}
        # The last submission the client-address sweep went through (client_ip_sweep).
        self.client_ips_swept_through = ""
        # Rung by every commit, for a relay waiting on this store.
        self.wakeup = RelayWakeup()
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
