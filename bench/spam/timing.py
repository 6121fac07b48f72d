"""Scoring's cost: the domain's scoring call (`spam_score`, what the pipeline's SCORE step
runs once it has the workspace's evidence in memory), timed alone for each mail of the
corpus in order, on the statistics the full run taught, read back from the store after
the run: one call per mail, with nothing else between the clock readings. Two clocks: the
thread's CPU time, which the targets hold (what the call costs, however busy the machine
is with other work), and the wall clock beside it."""

from __future__ import annotations

import os
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

HOW = (
    "the domain's spam_score alone, once per mail in order, the thread's CPU time, on the "
    "statistics the full run taught, read back from the store"
)
# Every token a workspace holds: the corpus teaches some 100,000.
ALL_TOKENS = 10_000_000


async def _statistics(store: Store, scope: str) -> Statistics:
    return (await store.spam.changes(scope, 0, ALL_TOKENS)).statistics


async def trained_evidence(intake: Intake, workspace_id: str) -> Evidence:
    store = intake.runtime.store
    own = await _statistics(store, workspace_id)
    return Evidence(own=own, instance=await _statistics(store, INSTANCE))


@frozen
class Timed:
    """What the scoring call was timed on, and its microseconds for each mail."""

    evidence: Evidence
    cpu_us: list[float]
    wall_us: list[float]


async def scoring_times(
    intake: Intake, workspace_id: str, threshold: float, mails: Sequence[Mail]
) -> Timed:
    evidence = await trained_evidence(intake, workspace_id)
    key = await intake.runtime.store.secrets.get_or_create(KEY_NAME, os.urandom(KEY_BYTES))
    hasher = TokenHasher(key)
    timed = Timed(evidence, [], [])
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
