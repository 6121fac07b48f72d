"""Step 10, content scoring: the heuristics and the learning filter, on what this process
knows of the workspace's statistics (service/spam_knowledge.py). Scoring never waits on
the store in the steady state: the knowledge is kept in memory and refreshed beside."""

from __future__ import annotations

from typing import Protocol

from intake.domain import validation
from intake.domain.controls import Controls
from intake.domain.model import FieldData, Form
from intake.domain.scoring import Score, score
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.model import Evidence
from intake.domain.spam.verdict import spam_score


class SpamKnowledgeSource(Protocol):
    async def hasher(self) -> TokenHasher: ...

    async def evidence(self, workspace_id: str) -> Evidence: ...


class SpamScoring:
    """Without knowledge (a library caller that wants none), the heuristics alone."""

    def __init__(self, knowledge: SpamKnowledgeSource | None = None) -> None:
        self._knowledge = knowledge

    async def score(self, form: Form, data: FieldData, controls: Controls) -> Score:
        if self._knowledge is None:
            return score(data, controls.subject)
        evidence = await self._knowledge.evidence(form.workspace_id)
        hasher = await self._knowledge.hasher()
        return spam_score(
            data,
            controls.subject,
            # What the submission keeps as its reply-to: the address teaching reads.
            validation.reply_address(data, controls.reply_to),
            hasher=hasher,
            evidence=evidence,
            threshold=form.spam_threshold,
        )
