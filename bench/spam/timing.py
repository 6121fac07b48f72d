"""Scoring's cost: the domain's scoring call (`spam_score`, what the pipeline's SCORE step
runs once it has the workspace's evidence in memory), timed alone for each mail of the
corpus in order, on the statistics the full run taught, read back from the store after
the run: one call per mail, with nothing else between the clock readings. Two clocks: the
thread's CPU time, which the targets hold (what the call costs, however busy the machine
is with other work), and the wall clock beside it.

The target is a workspace of LEARNED_TOKENS tokens; the corpus teaches fewer (some 72,000),
so the statistics timed hold as many more, each counted in one message, under hashes no
word of the corpus has: a larger table to look tokens up in, and every score the same."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence

from attrs import frozen

from bench.spam.corpus import Mail
from intake.domain import validation
from intake.domain.spam.hashing import KEY_BYTES, KEY_NAME, TokenHasher
from intake.domain.spam.model import INSTANCE, Evidence, Statistics
from intake.domain.spam.verdict import spam_score
from intake.entrypoints.library import Intake
from intake.ports.store import Store

# Every token a workspace holds, read back whole.
ALL_TOKENS = 10_000_000
# What the target's workspace holds (docs/scoring.md, "Cost").
LEARNED_TOKENS = 100_000
_SPAM_ONCE, _HAM_ONCE = 1 << 32, 1  # model.pack(1, 0), model.pack(0, 1)
HOW = (
    "the domain's spam_score alone, once per mail in order, the thread's CPU time, on the "
    "statistics the full run taught, read back from the store, filled up to "
    f"{LEARNED_TOKENS:,} tokens"
)


async def _statistics(store: Store, scope: str) -> Statistics:
    return (await store.spam.changes(scope, 0, ALL_TOKENS)).statistics


def _filled(trained: Statistics, extra: dict[int, int]) -> Statistics:
    return Statistics(
        trained.spam_messages,
        trained.ham_messages,
        {**trained.tokens, **extra},
        trained.generation,
    )


def with_learned_tokens(evidence: Evidence, count: int = LEARNED_TOKENS) -> Evidence:
    """The evidence with tokens added until the workspace holds `count`: random hashes,
    none already held, each seen in one spam or one ham message (one fixed seed). The
    instance's layer gets the same, so that the other workspaces' share stays empty."""
    held = evidence.own.tokens
    rng = random.Random(count)  # noqa: S311 - a repeatable filling, not a secret
    extra: dict[int, int] = {}
    while len(held) + len(extra) < count:
        token = rng.getrandbits(64) - (1 << 63)  # a signed 64-bit hash, as TokenHasher's
        if token not in held and token not in evidence.instance.tokens:
            extra[token] = _SPAM_ONCE if rng.random() < 0.3 else _HAM_ONCE
    if not extra:
        return evidence
    return Evidence(own=_filled(evidence.own, extra), instance=_filled(evidence.instance, extra))


@frozen
class Timed:
    """What the scoring call was timed on, and its microseconds for each mail."""

    evidence: Evidence  # filled up to LEARNED_TOKENS
    taught_tokens: int  # of them, what the run taught
    cpu_us: list[float]
    wall_us: list[float]


async def scoring_times(
    intake: Intake, workspace_id: str, threshold: float, mails: Sequence[Mail]
) -> Timed:
    store = intake.runtime.store
    taught = await _statistics(store, workspace_id)
    evidence = with_learned_tokens(
        Evidence(own=taught, instance=await _statistics(store, INSTANCE))
    )
    key = await intake.runtime.store.secrets.get_or_create(KEY_NAME, os.urandom(KEY_BYTES))
    hasher = TokenHasher(key)
    timed = Timed(evidence, len(taught.tokens), [], [])
    for mail in mails:
        data = mail.data
        reply_to = validation.reply_address(data, None)
        wall = time.perf_counter_ns()
        cpu = time.thread_time_ns()
        spam_score(
            data, mail.subject, reply_to, hasher=hasher, evidence=evidence, threshold=threshold
        )
        cpu = time.thread_time_ns() - cpu
        wall = time.perf_counter_ns() - wall
        timed.cpu_us.append(cpu / 1000)
        timed.wall_us.append(wall / 1000)
    return timed
