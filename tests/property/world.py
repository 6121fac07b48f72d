"""A whole intake on the in-memory fakes, built fresh for every Hypothesis example.

Property tests drive `SubmissionPipeline.submit` directly; this module holds the world
they drive it in, the request and body builders, and a snapshot of everything a request
may store, so that "nothing is stored" is one comparison.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence

from attrs import define, frozen

from intake.adapters.memory import (
    FakeChallengeVerifier,
    FakeClock,
    InMemoryPipelineStore,
    SeededIdSource,
)
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.domain.client_network import client_network
from intake.domain.idempotency import RETENTION, IdempotencyRecord, Route, scope
from intake.domain.model import Challenge, ChallengeProvider, Form, Plan, Workspace
from intake.domain.quota import ceiling, period
from intake.domain.ratelimit import RateLimits, RateRule, Window
from intake.ports.challenge import ChallengeVerdict
from intake.service.commit_timing import CommitTiming
from intake.service.messages import (
    FieldsBody,
    Outcome,
    PublicTarget,
    RawBody,
    ServerTarget,
    SubmitRequest,
)
from intake.service.pipeline import PipelineSettings, SubmissionPipeline
from tests.property.seeding import Seeding

# Challenge tokens the fake provider knows; any other token is rejected.
PASSING_TOKEN = "token-that-passes"
FLAKY_TOKEN = "token-whose-provider-times-out"
REJECTED_TOKEN = "token-that-is-rejected"

CHALLENGE = Challenge(ChallengeProvider.TURNSTILE, "operator-secret")
ALLOWED_ORIGIN = "https://shop.example"
CLIENT_IP = "203.0.113.7"
CLIENT = client_network(CLIENT_IP)  # who CLIENT_IP is to the rate limits and the keys

# Rate limits no sequence of a property test can reach, for tests about something else.
UNLIMITED = RateLimits(
    public_burst=RateRule(10**9, 30),
    public_sustained=RateRule(10**9, 600),
    public_form=RateRule(10**9, 600),
    server_burst=RateRule(10**9, 30),
    server_sustained=RateRule(10**9, 600),
)


async def stream(chunks: Sequence[bytes], *, yield_between: bool = False) -> AsyncIterator[bytes]:
    """A body on the wire. `yield_between` hands the loop to other requests after every
    chunk, so that concurrent submissions really interleave."""
    for chunk in chunks:
        if yield_between:
            await asyncio.sleep(0)
        yield chunk


@frozen
class Snapshot:
    """Everything a request could leave behind in the store."""

    submissions: int
    outbox: int
    usage: tuple[int, ...]
    idempotency: tuple[IdempotencyRecord | None, ...]

    @property
    def kept(self) -> tuple[int, int, tuple[int, ...]]:
        """Submissions, outbox rows and quota used: what a filled honeypot never adds to
        (it records its Idempotency-Key alone, so that a retry replays like a success)."""
        return self.submissions, self.outbox, self.usage


@define
class World:
    store: InMemoryPipelineStore
    clock: FakeClock
    limiter: InProcessRateLimiter
    verifier: FakeChallengeVerifier
    seed: Seeding
    pipeline: SubmissionPipeline
    settings: PipelineSettings

    @classmethod
    def build(
        cls, settings: PipelineSettings | None = None, commit_timing: CommitTiming | None = None
    ) -> World:
        settings = settings or PipelineSettings()
        store = InMemoryPipelineStore()
        clock = FakeClock()
        ids = SeededIdSource(0)
        limiter = InProcessRateLimiter()
        verifier = FakeChallengeVerifier(
            {PASSING_TOKEN: ChallengeVerdict.PASSED, FLAKY_TOKEN: ChallengeVerdict.UNAVAILABLE}
        )
        pipeline = SubmissionPipeline(
            store=store,
            rate_limiter=limiter,
            challenge=verifier,
            clock=clock,
            id_source=ids,
            settings=settings,
            commit_timing=commit_timing,
        )
        return cls(store, clock, limiter, verifier, Seeding(store, clock, ids), pipeline, settings)

    async def workspace(
        self, plan: Plan = Plan.FREE, monthly_limit: int | None = None
    ) -> Workspace:
        return await self.seed.workspace(plan, monthly_limit)

    async def submit(self, request: SubmitRequest) -> Outcome:
        return await self.pipeline.submit(request)

    def exhaust_rate_limit(self, windows: Sequence[Window]) -> None:
        """Hits the windows until the limiter refuses, as earlier requests would have."""
        now = self.clock.now().timestamp()
        while self.limiter.hit_now(windows, now).allowed:
            pass

    def ceiling(self, workspace: Workspace) -> int:
        return ceiling(workspace, self.settings.plans)

    async def usage(self, workspace_id: str) -> int:
        """Accepted submissions counted this month."""
        return await self.store.workspaces.usage(workspace_id, period(self.clock.now()))

    async def idempotency(
        self, form: Form, key: str | None
    ) -> tuple[IdempotencyRecord | None, ...]:
        if key is None:
            return ()
        not_before = self.clock.now() - RETENTION
        return tuple(
            [
                await self.store.submissions.find_idempotency(
                    scope(route, form.form_id, CLIENT), key, not_before
                )
                for route in Route
            ]
        )

    async def snapshot(
        self,
        workspaces: Iterable[Workspace] = (),
        forms: Iterable[Form] = (),
        key: str | None = None,
    ) -> Snapshot:
        usage = [await self.usage(w.workspace_id) for w in workspaces]
        records: list[IdempotencyRecord | None] = []
        for form in forms:
            records.extend(await self.idempotency(form, key))
        return Snapshot(
            submissions=self.store.count_submissions(),
            outbox=self.store.count_outbox(),
            usage=tuple(usage),
            idempotency=tuple(records),
        )


def public(form: Form) -> PublicTarget:
    return PublicTarget(form.public_form_key)


def request(
    target: PublicTarget | ServerTarget,
    body: RawBody | FieldsBody,
    *,
    client_ip: str = CLIENT_IP,
    origin: str | None = None,
    idempotency_key: str | None = None,
    challenge_token: str | None = None,
) -> SubmitRequest:
    return SubmitRequest(
        target=target,
        body=body,
        client_ip=client_ip,
        origin=origin,
        idempotency_key=idempotency_key,
        challenge_token=challenge_token,
    )
