"""Lessons and statistics for the spam filter's contract tests: hashes that overlap between
submissions, and the extremes of 64-bit signed integers a store must keep exactly."""

from __future__ import annotations

from collections.abc import Iterable

from intake.domain.spam.model import Label, Lesson, unpack
from intake.ports.store import Store
from tests.contract.builders import WORKSPACE_ID

LOWEST, HIGHEST = -(2**63), 2**63 - 1
EVERYTHING = 1_000_000  # a limit above any test's number of tokens

# What one scope's statistics say, generation aside: (spam messages, ham messages,
# {token: (spam, ham)}).
Snapshot = tuple[int, int, dict[int, tuple[int, int]]]


def hashes_of(n: int) -> tuple[int, ...]:
    """The n-th submission's hashes: some of its own, some shared with its neighbours."""
    own = {n * 1_000 + 1, -(n * 1_000 + 2), n % 3, (n + 1) % 3, 7}
    if n % 2 == 0:
        own |= {LOWEST, HIGHEST}
    return tuple(sorted(own))


def lesson(n: int, label: Label, workspace_id: str = WORKSPACE_ID) -> Lesson:
    return Lesson(workspace_id, label, hashes_of(n))


async def snapshot(store: Store, scope: str) -> Snapshot:
    change = await store.spam.changes(scope, 0, EVERYTHING)
    stats = change.statistics
    tokens = {token: unpack(packed) for token, packed in stats.tokens.items()}
    return stats.spam_messages, stats.ham_messages, tokens


def expected(lessons: Iterable[Lesson]) -> Snapshot:
    """What the lessons sum to, counted by hand."""
    spam = ham = 0
    tokens: dict[int, tuple[int, int]] = {}
    for each in lessons:
        is_spam = each.label is Label.SPAM
        spam += is_spam
        ham += not is_spam
        for token in each.hashes:
            s, h = tokens.get(token, (0, 0))
            tokens[token] = (s + is_spam, h + (not is_spam))
    return spam, ham, tokens
