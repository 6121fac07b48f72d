"""The TREC spam track's figures over one filter's scores (higher: more spam-like).

- A ROC point: the most spam caught while at most a share of the real messages (ham) is
  flagged. Only a real threshold counts: a cut never falls inside a group of equal
  scores, so a spam tied with a ham is caught only where that ham is flagged too.
- (1-ROCA)%: the area above the ROC curve, in percent; the share of (spam, ham) pairs that
  the scores put in the wrong order, a tie counting half (the ROC curve's straight
  segment across a group of equal scores).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from attrs import frozen

# Rounding guard for the allowed count of flagged ham (0.001 * 2000 is not exactly 2).
_EPSILON = 1e-9


@frozen
class Scored:
    """One message's true label, its score, and whether the filter flagged it at its own
    cutoff (for intake: kept with status `spam` at the form's threshold)."""

    spam: bool
    score: float
    flagged: bool


def _split(results: Sequence[Scored]) -> tuple[list[float], list[float]]:
    spam = [r.score for r in results if r.spam]
    ham = [r.score for r in results if not r.spam]
    if not spam or not ham:
        raise ValueError("the figures need both spam and ham")
    return spam, ham


def caught_at(results: Sequence[Scored], flagged_share: float) -> float:
    """The share of spam caught by the best threshold flagging at most `flagged_share`
    of the ham (scores at or above the threshold are flagged)."""
    spam, ham = _split(results)
    allowed = math.floor(flagged_share * len(ham) + _EPSILON)
    ham_high = sorted(ham, reverse=True)
    # The lowest threshold allowed is just above the (allowed+1)-th highest ham score:
    # every ham tied with it would be flagged with it.
    if allowed >= len(ham_high):
        return 1.0
    bar = ham_high[allowed]
    return sum(1 for s in spam if s > bar) / len(spam)


def one_minus_roca_percent(results: Sequence[Scored]) -> float:
    """(1-ROCA)%: the share of (spam, ham) pairs ordered wrongly, a tie counting half."""
    spam, ham = _split(results)
    ham_sorted = sorted(ham)
    right = 0.0
    for s in spam:
        below = bisect.bisect_left(ham_sorted, s)
        tied = bisect.bisect_right(ham_sorted, s) - below
        right += below + tied / 2
    return 100.0 * (1.0 - right / (len(spam) * len(ham)))


@frozen
class Verdicts:
    """What a filter decided at its own cutoff: shares of spam caught and ham flagged."""

    spam_caught: float
    ham_flagged: float


def verdicts(results: Sequence[Scored]) -> Verdicts:
    """The shares of spam flagged and of ham flagged at the filter's own cutoff."""
    spam = [r.flagged for r in results if r.spam]
    ham = [r.flagged for r in results if not r.spam]
    if not spam or not ham:
        raise ValueError("the figures need both spam and ham")
    return Verdicts(sum(spam) / len(spam), sum(ham) / len(ham))


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (`share` from 0 to 1) of `values`."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered) - _EPSILON))
    return ordered[rank - 1]


FLAGGED_SHARES = (0.001, 0.005, 0.01)


@frozen
class Figures:
    """One filter's figures over the second half of a run."""

    spam: int
    ham: int
    caught_at: tuple[float, ...]  # spam caught at each of FLAGGED_SHARES of ham flagged
    cutoff: Verdicts  # at the filter's own cutoff (intake: the form's threshold)
    one_minus_roca: float


def second_half(results: Sequence[Scored]) -> Sequence[Scored]:
    """What the figures are taken over: the filter has learned from the first half."""
    return results[len(results) // 2 :]


def figures_of(results: Sequence[Scored]) -> Figures:
    half = second_half(results)
    return Figures(
        spam=sum(1 for r in half if r.spam),
        ham=sum(1 for r in half if not r.spam),
        caught_at=tuple(caught_at(half, share) for share in FLAGGED_SHARES),
        cutoff=verdicts(half),
        one_minus_roca=one_minus_roca_percent(half),
    )
