"""Robinson's per-token probabilities combined by Fisher's chi-square, as bogofilter and
SpamBayes do (docs/scoring.md, "The learning filter").

For a token seen in b of the nb messages taught as spam and g of the ng taught as ham:
    p = (b/nb) / (b/nb + g/ng)
    f = (S*X + n*p) / (S + n),   n = b + g
Only tokens with |f - 0.5| >= MIN_DEVIATION count, the MAX_DISCRIMINATORS strongest.
H = C⁻¹(-2 Σ ln f, 2k) and S = C⁻¹(-2 Σ ln(1-f), 2k), and the indicator is
I = (1 + H - S) / 2, from 0 (ham) to 1 (spam); 0.5 when nothing is known.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from attrs import frozen

from intake.domain.spam.model import unpack

STRENGTH = 0.45  # S: how much an unknown token's X weighs against its counts
UNKNOWN = 0.5  # X: what a token with no counts is taken to say
MIN_DEVIATION = 0.1
MAX_DISCRIMINATORS = 150
_FLOOR = 1e-200


@frozen
class Judgement:
    """The indicator, and the strongest clues as (token hash, f), most telling first."""

    indicator: float
    clues: tuple[tuple[int, float], ...]


NOTHING_KNOWN = Judgement(0.5, ())


def _chi2q(x2: float, v: int) -> float:
    """P(chi² with v degrees of freedom >= x2), v even."""
    m = x2 / 2.0
    term = math.exp(-m)
    total = term
    for i in range(1, v // 2):
        term *= m / i
        total += term
    return min(total, 1.0)


def token_probability(spam: int, ham: int, spam_messages: int, ham_messages: int) -> float:
    spam_ratio = spam / spam_messages if spam_messages else 0.0
    ham_ratio = ham / ham_messages if ham_messages else 0.0
    if spam_ratio + ham_ratio == 0.0:
        return UNKNOWN
    p = spam_ratio / (spam_ratio + ham_ratio)
    n = spam + ham
    return (STRENGTH * UNKNOWN + n * p) / (STRENGTH + n)


def judge(
    hashes: Iterable[int], tokens: Mapping[int, int], spam_messages: int, ham_messages: int
) -> Judgement:
    """What the statistics (`tokens`: hash to packed counts) say of one message's tokens."""
    if spam_messages == 0 or ham_messages == 0:
        return NOTHING_KNOWN  # one side only: every known token would look like it
    clues: list[tuple[float, int, float]] = []
    for token in hashes:
        packed = tokens.get(token)
        if not packed:
            continue
        spam, ham = unpack(packed)
        f = token_probability(spam, ham, spam_messages, ham_messages)
        strength = abs(f - 0.5)
        if strength >= MIN_DEVIATION:
            clues.append((strength, token, f))
    if not clues:
        return NOTHING_KNOWN
    if len(clues) > MAX_DISCRIMINATORS:
        clues.sort(reverse=True)
        del clues[MAX_DISCRIMINATORS:]
    ham_log = sum(math.log(max(1.0 - f, _FLOOR)) for _, _, f in clues)
    spam_log = sum(math.log(max(f, _FLOOR)) for _, _, f in clues)
    k = len(clues)
    ham_side = _chi2q(-2.0 * spam_log, 2 * k)
    spam_side = _chi2q(-2.0 * ham_log, 2 * k)
    indicator = (1.0 + ham_side - spam_side) / 2.0
    clues.sort(reverse=True)
    return Judgement(indicator, tuple((token, f) for _, token, f in clues[:8]))
