"""What the submission pipeline reads and writes of a store: a form and its workspace
by key or id, an API key by hash, an idempotency record, and the commit. Every `Store`
is one; the in-memory fakes of adapters/memory are this alone, for the property tests
that drive the whole pipeline."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from intake.domain.idempotency import IdempotencyRecord
from intake.domain.model import ApiKey
from intake.ports.forms import FormContext
from intake.ports.submissions import CommitPlan, CommitResult, HoneypotHit, HoneypotResult


class FormLookup(Protocol):
    async def resolve_public_key(self, public_form_key: str) -> FormContext | None: ...

    async def resolve_id(self, form_id: str) -> FormContext | None: ...


class KeyLookup(Protocol):
    async def find_by_hash(self, key_hash: bytes) -> ApiKey | None: ...


class SubmissionCommits(Protocol):
    async def commit(self, plan: CommitPlan) -> CommitResult: ...

    async def record_honeypot(self, hit: HoneypotHit) -> HoneypotResult: ...

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None: ...


class PipelineStore(Protocol):
    @property
    def forms(self) -> FormLookup: ...

    @property
    def api_keys(self) -> KeyLookup: ...

    @property
    def submissions(self) -> SubmissionCommits: ...
