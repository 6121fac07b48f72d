"""Robinson's per-token probabilities combined by Fisher's chi-square, as bogofilter and
SpamBayes do (docs/scoring.md, "The learning filter").

For a token seen in b of the nb messages taught as spam and g of the ng taught as ham:
    p = (b/nb) / (b/nb + g/ng)
    f = (S·X + n·p) / (S + n),   n = b + g
Only tokens with |f - 0.5| >= MIN_DEVIATION are clues, the MAX_CLUES strongest. Fisher's
method asks two questions of the k clues: how unlikely their f are if the message were
random (H, from Σ ln f) and how unlikely their 1-f are (S, from Σ ln(1-f)), each the
tail of a chi-square with 2k degrees of freedom. SpamBayes's indicator (1 + S - H) / 2
rounds to 0 or 1 for most messages, so the filter keeps the difference of the two tails'
logarithms instead: the same order, without ties, on a scale of natural-log odds
(`evidence`: positive says spam, negative ham, 0 nothing known).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from attrs import frozen

STRENGTH = 0.45  # S: how much an unknown token's X weighs against its counts
UNKNOWN = 0.5  # X: what a token with no counts is taken to say
MIN_DEVIATION = 0.1
MAX_CLUES = 150
_SHOWN_CLUES = 6
_EPSILON = 1e-12


class TokenCounts(Protocol):
    """A token hash's packed counts (model.pack), or None when it has none."""

    def get(self, token: int, /) -> int | None: ...


@frozen
class Judgement:
    """The evidence (log odds: > 0 spam, < 0 ham) and the strongest clues as (index of
    the token in the message's list, f), the most telling first."""

    evidence: float
    clues: tuple[tuple[int, float], ...]


NOTHING_KNOWN = Judgement(0.0, ())


def log_chi2_tail(x2: float, freedom: int) -> float:
    """ln P(χ² with `freedom` degrees of freedom >= x2), by Wilson and Hilferty's normal
    approximation: constant time, where the exact series takes k terms. Over the
    SpamAssassin corpus it ranks every message as the exact series does (docs/scoring.md)."""
    if x2 <= 0.0:
        return 0.0
    spread = 2.0 / (9.0 * freedom)
    z = (math.cbrt(x2 / freedom) - (1.0 - spread)) / math.sqrt(spread)
    if z < 6.0:
        return math.log(max(0.5 * math.erfc(z / math.sqrt(2.0)), 1e-300))
    # The normal tail's asymptote, where erfc would underflow.
    return -0.5 * z * z - math.log(z * math.sqrt(2.0 * math.pi))


def judge(
    hashes: Sequence[int],
    tokens: TokenCounts,
    spam_messages: int,
    ham_messages: int,
) -> Judgement:
    """What statistics (`tokens`: hash to packed counts, model.pack) say of a message's
    token hashes."""
    if spam_messages == 0 or ham_messages == 0:
        return NOTHING_KNOWN  # one side only: every known token would look like it
    found = tokens.get
    clues: list[tuple[float, int, float]] = []
    for index, token in enumerate(hashes):
        packed = found(token)
        if not packed:
            continue
        spam, ham = packed >> 32, packed & 0xFFFFFFFF
        spam_ratio = spam / spam_messages
        ratio_sum = spam_ratio + ham / ham_messages
        n = spam + ham
        f = (STRENGTH * UNKNOWN + n * spam_ratio / ratio_sum) / (STRENGTH + n)
        strength = f - 0.5 if f > 0.5 else 0.5 - f
        if strength >= MIN_DEVIATION:
            clues.append((strength, index, f))
    if not clues:
        return NOTHING_KNOWN
    clues.sort(reverse=True)
    kept = clues[:MAX_CLUES]
    freedom = 2 * len(kept)
    ln_f = sum(math.log(max(f, _EPSILON)) for _, _, f in kept)
    ln_not_f = sum(math.log(max(1.0 - f, _EPSILON)) for _, _, f in kept)
    # Low f everywhere makes Σ ln f far below chance: its tail is tiny, and the message
    # hammy. The spam side mirrors it.
    evidence = log_chi2_tail(-2.0 * ln_f, freedom) - log_chi2_tail(-2.0 * ln_not_f, freedom)
    return Judgement(evidence, tuple((index, f) for _, index, f in kept[:_SHOWN_CLUES]))
