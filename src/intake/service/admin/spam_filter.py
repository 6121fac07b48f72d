"""A workspace's spam filter, seen and taught from the owner's side: what it knows (`intake
spam stats`, GET /v1/spam, the dashboard's settings) and an owner's history brought from
an export (`intake spam train`). Triage teaches it too (triage.py)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from intake.domain.spam.history import PastMessage
from intake.domain.spam.lessons import token_hashes
from intake.domain.spam.model import Label, Lesson
from intake.ports.clock import Clock
from intake.ports.spam_statistics import SpamSummary
from intake.ports.store import Store
from intake.service.admin.workspaces import existing_workspace
from intake.service.spam_knowledge import SpamKnowledge
from intake.service.spam_settling import settle_untouched

# Messages per transaction while training: a long export never holds a lock for long.
TRAIN_BATCH = 500


class SpamFilter:
    def __init__(self, store: Store, clock: Clock, knowledge: SpamKnowledge) -> None:
        self._store = store
        self._clock = clock
        # The process's spam statistics: told when a lesson changed them.
        self._knowledge = knowledge

    async def summary(self, workspace_id: str) -> SpamSummary:
        """Counts only: messages taught each way and tokens known, the workspace's and the
        instance's layer's."""
        await existing_workspace(self._store.workspaces, workspace_id)
        return await self._store.spam.summary(workspace_id)

    async def train(self, workspace_id: str, label: Label, messages: Iterable[PastMessage]) -> int:
        """Teaches the workspace's filter messages that are no submission here (an owner's
        history): counted as triage counts one, a batch per transaction, and never
        unlearned one by one. Returns how many were taught."""
        await existing_workspace(self._store.workspaces, workspace_id)
        hasher = await self._knowledge.hasher()
        taught = 0
        batch: list[Lesson] = []
        for message in messages:
            hashes = token_hashes(hasher, message.data, message.subject, message.reply_to)
            batch.append(Lesson(workspace_id, label, hashes))
            if len(batch) >= TRAIN_BATCH:
                taught += await self._store.spam.seed(batch)
                batch = []
        if batch:
            taught += await self._store.spam.seed(batch)
        self._knowledge.invalidate(workspace_id)
        return taught

    async def settle_untouched(self, after: timedelta) -> int:
        """The rule for submissions nobody touches (service/spam_settling.py), now."""
        hasher = await self._knowledge.hasher()
        return await settle_untouched(self._store.spam, hasher, self._clock.now(), after)
