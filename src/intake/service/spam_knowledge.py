"""What this process knows of the learning filter's statistics (docs/scoring.md, "What the
learning filter keeps"): each workspace's and the instance's, in memory, so that scoring
a submission costs no round trip in the steady state.

- The first use of a scope loads it (the one time a submission waits for it).
- Then, at most every REFRESH_EVERY seconds per scope in use, a background task asks the
  store for what changed since the generation held and merges it; a submission never
  waits for it. Every RELOAD_EVERY seconds a scope is loaded whole again, in the
  background too: what another process changed and a delta missed is never kept longer.
- `invalidate(workspace_id)`: this process's triage changed the workspace; its next
  evidence() refreshes at once, so the next submission is scored with it.
- Memory is bounded by a total of tokens (INTAKE_SPAM_CACHE_TOKENS), the instance layer
  included: the least recently used workspaces are dropped first, and a scope larger
  than its share keeps its most used tokens (a delta adds new tokens only while the
  scope has room; the next full load picks the most used again). A scope held costs
  memory even with no token, so at most one scope is held per SCOPE_TOKENS of the
  budget: many workspaces that taught little stay bounded too.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from datetime import datetime

from attrs import define

from intake.domain.errors import StorageUnavailable
from intake.domain.spam.hashing import KEY_BYTES, KEY_NAME, TokenHasher
from intake.domain.spam.model import EMPTY, INSTANCE, Evidence, Statistics, merged_counts
from intake.ports.clock import Clock
from intake.ports.secrets import SecretRepository
from intake.ports.spam_statistics import SpamStatisticsRepository

log = logging.getLogger("intake.spam")

DEFAULT_TOKEN_BUDGET = 300_000  # tokens, about 30 MB: INTAKE_SPAM_CACHE_TOKENS
REFRESH_EVERY = 2.0  # seconds between two asks for a scope's changes
RELOAD_EVERY = 600.0  # seconds between two full loads of a scope
# A scope's share of the budget: the instance and one large workspace fit together.
_SHARE = 2
# What holding one scope costs, in tokens: an empty scope's objects take about 400 bytes
# (measured), a token about 100.
SCOPE_TOKENS = 4


@define
class _Held:
    statistics: Statistics
    loaded_at: datetime
    checked_at: datetime
    stale: bool = False  # this process's triage changed it: refreshed before next use
    words: int = 0  # of its statistics' word_memo, counted in the budget


class SpamKnowledge:
    def __init__(
        self,
        statistics: SpamStatisticsRepository,
        secrets: SecretRepository,
        clock: Clock,
        *,
        token_budget: int = DEFAULT_TOKEN_BUDGET,
        refresh_every: float = REFRESH_EVERY,
        reload_every: float = RELOAD_EVERY,
    ) -> None:
        if token_budget < 2:
            raise ValueError("a token budget is at least 2")
        self._statistics = statistics
        self._secrets = secrets
        self._clock = clock
        self._budget = token_budget
        self._scope_limit = max(1, token_budget // _SHARE)
        self._scope_cap = max(2, token_budget // SCOPE_TOKENS)  # the instance and one more
        self._refresh_every = refresh_every
        self._reload_every = reload_every
        self._hasher: TokenHasher | None = None
        self._held: OrderedDict[str, _Held] = OrderedDict()  # least recently used first
        self._tokens = 0  # held, in every scope
        self._words = 0  # remembered by scoring beside them (Statistics.word_memo)
        self._loading: dict[str, asyncio.Future[_Held | None]] = {}
        self._background: dict[str, asyncio.Task[None]] = {}

    async def hasher(self) -> TokenHasher:
        """The instance's token key (SecretRepository), read once and kept."""
        if self._hasher is None:
            key = await self._secrets.get_or_create(KEY_NAME, os.urandom(KEY_BYTES))
            self._hasher = self._hasher or TokenHasher(key)
        return self._hasher

    async def evidence(self, workspace_id: str) -> Evidence:
        # Both scopes held and fresh, as in the steady state: no coroutine for either.
        now = self._clock.now()
        own = self._held_now(workspace_id, now)
        if own is None:
            own = await self._scope(workspace_id)
            now = self._clock.now()
        instance = self._held_now(INSTANCE, now)
        if instance is None:
            instance = await self._scope(INSTANCE)
        return Evidence(own, instance)

    def invalidate(self, workspace_id: str) -> None:
        """The workspace's statistics (and so the instance's) changed here: the next
        evidence() asks for the changes before it answers."""
        for scope in (workspace_id, INSTANCE):
            held = self._held.get(scope)
            if held is not None:
                held.stale = True

    @property
    def tokens_held(self) -> int:
        return self._tokens

    @property
    def words_held(self) -> int:
        return self._words

    async def settled(self) -> None:
        """Waits for the background refreshes under way (tests, and close)."""
        while self._background:
            await asyncio.gather(*self._background.values(), return_exceptions=True)

    async def close(self) -> None:
        for task in self._background.values():
            task.cancel()
        await self.settled()

    async def _scope(self, scope: str) -> Statistics:
        held = self._held.get(scope)
        if held is None:
            held = await self._first_load(scope)
            return EMPTY if held is None else held.statistics
        fresh = self._held_now(scope, self._clock.now())
        if fresh is not None:
            return fresh
        self._held.move_to_end(scope)
        self._count_words(scope, held)
        held.stale = False
        try:
            await self._refresh(scope, full=False)
        except StorageUnavailable:
            log.warning("spam statistics unavailable", extra={"spam_scope": scope or "instance"})
        return self._statistics_of(scope)

    def _held_now(self, scope: str, now: datetime) -> Statistics | None:
        """A held scope's statistics when they need no waiting (not stale), its refresh
        started beside when due; None for a scope `_scope` must load or refresh first."""
        held = self._held.get(scope)
        if held is None or held.stale:
            return None
        self._held.move_to_end(scope)
        self._count_words(scope, held)
        if (now - held.loaded_at).total_seconds() >= self._reload_every:
            self._in_background(scope, full=True)
        elif (now - held.checked_at).total_seconds() >= self._refresh_every:
            self._in_background(scope, full=False)
        return held.statistics

    def _statistics_of(self, scope: str) -> Statistics:
        held = self._held.get(scope)
        return EMPTY if held is None else held.statistics

    async def _first_load(self, scope: str) -> _Held | None:
        """One load at a time per scope: submissions arriving meanwhile wait for it. A
        store that cannot answer leaves the scope unknown (scored as untaught) for now."""
        loading = self._loading.get(scope)
        if loading is not None:
            return await asyncio.shield(loading)
        future: asyncio.Future[_Held | None] = asyncio.get_running_loop().create_future()
        self._loading[scope] = future
        try:
            await self._refresh(scope, full=True)
        except StorageUnavailable:
            log.warning("spam statistics unavailable", extra={"spam_scope": scope or "instance"})
        finally:
            del self._loading[scope]
            future.set_result(self._held.get(scope))
        return self._held.get(scope)

    def _in_background(self, scope: str, *, full: bool) -> None:
        if scope in self._background:
            return
        # Marked as asked now, so that the next submissions do not ask again meanwhile.
        self._held[scope].checked_at = self._clock.now()
        task = asyncio.get_running_loop().create_task(self._background_refresh(scope, full))
        self._background[scope] = task

    async def _background_refresh(self, scope: str, full: bool) -> None:
        try:
            await self._refresh(scope, full=full)
        except StorageUnavailable:
            # What is held stays: the next due refresh asks again.
            log.warning("spam statistics unavailable", extra={"spam_scope": scope or "instance"})
        except Exception:
            log.exception("spam statistics refresh failed")
        finally:
            self._background.pop(scope, None)

    async def _refresh(self, scope: str, *, full: bool) -> None:
        held = self._held.get(scope)
        now = self._clock.now()
        if full or held is None:
            change = await self._statistics.changes(scope, 0, self._scope_limit)
            self._keep(scope, _Held(change.statistics, loaded_at=now, checked_at=now))
            return
        since = held.statistics.generation
        change = await self._statistics.changes(scope, since, self._scope_limit)
        latest = change.statistics
        if latest.generation < since or len(latest.tokens) >= self._scope_limit:
            # The store went back (emptied), or more changed than a delta carries.
            await self._refresh(scope, full=True)
            return
        held = self._held.get(scope)
        if held is None:  # dropped while it was asked
            return
        held.checked_at = now
        if latest.generation <= held.statistics.generation:  # nothing new, or known already
            return
        tokens = merged_counts(held.statistics.tokens, latest.tokens, self._scope_limit)
        merged = Statistics(latest.spam_messages, latest.ham_messages, tokens, latest.generation)
        self._keep(scope, _Held(merged, loaded_at=held.loaded_at, checked_at=now))

    def _count_words(self, scope: str, held: _Held) -> None:
        """The words scoring remembered beside the scope's statistics since they were
        last counted weigh in the budget as tokens do: past it, the least recently used
        workspaces go; a scope whose words alone pass its share forgets them."""
        memo = held.statistics.word_memo
        if len(memo) == held.words:
            return
        if len(held.statistics.tokens) + len(memo) > self._scope_limit:
            memo.clear()  # only a cache: each word's f is worked out again when next seen
        self._words += len(memo) - held.words
        held.words = len(memo)
        self._evict(keep=scope)

    def _keep(self, scope: str, held: _Held) -> None:
        before = self._held.pop(scope, None)
        if before is not None:
            self._tokens -= len(before.statistics.tokens)
            self._words -= before.words
        self._held[scope] = held
        self._tokens += len(held.statistics.tokens)
        self._evict(keep=scope)

    def _evict(self, keep: str) -> None:
        """The least recently used workspaces go first; the instance and `keep` stay."""
        if not self._over():
            return
        for scope in list(self._held):
            if not self._over():
                return
            if scope in (keep, INSTANCE):
                continue
            gone = self._held.pop(scope)
            self._tokens -= len(gone.statistics.tokens)
            self._words -= gone.words

    def _over(self) -> bool:
        return self._tokens + self._words > self._budget or len(self._held) > self._scope_cap
