"""Robinson's per-token probabilities combined by Fisher's chi-square, as bogofilter and
SpamBayes do (docs/scoring.md, "The learning filter").

For a token seen in b of the nb messages taught as spam and g of the ng taught as ham:
    p = (b/nb) / (b/nb + g/ng)
    f = (S·X + n·p) / (S + n),   n = b + g
Only tokens with |f - 0.5| >= MIN_DEVIATION are clues, the MAX_CLUES strongest. Fisher's
method asks two questions of the k clues: how unlikely their f are if the message were
random (H, from Σ ln f) and how unlikely their 1-f are (S, from Σ ln(1-f)), each the
tail of a chi-square with 2k degrees of freedom. SpamBayes's indicator (1 + S - H) / 2
rounds to 0 or 1 for most messages, so the filter keeps its logit instead, worked out
from the tails' logarithms (`fisher_evidence`): the same order, without ties, in
natural-log odds (`evidence`: positive says spam, negative ham, 0 nothing known or the
clues at odds with each other).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from itertools import compress
from typing import Protocol

from attrs import frozen

from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.model import Statistics
from intake.domain.spam.tokens import TokenParts

try:  # the classifier in C, when it was built (domain/native); the Python is its reference
    from intake.domain.native import clues as _native
except ImportError:  # pragma: no cover - an install without a C compiler
    _native = None  # type: ignore[assignment]

STRENGTH = 0.15  # S: how much an unknown token's X weighs against its counts
UNKNOWN = 0.5  # X: what a token with no counts is taken to say
MIN_DEVIATION = 0.3
MAX_CLUES = 150
# Words whose f a Statistics remembers (about 100 bytes each): a process's memory stays
# bounded however many distinct words visitors send.
WORD_MEMO = 50_000
_SHOWN_CLUES = 6
_SPAMMY = UNKNOWN + MIN_DEVIATION
_HAMMY = UNKNOWN - MIN_DEVIATION
_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TINY = 1e-300
# A token too close to UNKNOWN to be a clue: no f is 0 (S > 0), so it stands apart.
NOT_A_CLUE = 0.0


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


@frozen
class Said:
    """A Judgement with its clues' tokens themselves: (token, f), the most telling first."""

    evidence: float
    clues: tuple[tuple[str, float], ...]


NOTHING_SAID = Said(0.0, ())


def _log_normal_tail(z: float) -> float:
    """ln P(N(0, 1) > z)."""
    if z < 6.0:
        return math.log(max(0.5 * math.erfc(z / _SQRT2), _TINY))
    # The tail's asymptote, where erfc would underflow.
    return -0.5 * z * z - math.log(z * _SQRT_2PI)


def log_chi2_tails(x2: float, freedom: int) -> tuple[float, float]:
    """ln P(χ² >= x2) and ln P(χ² < x2), with `freedom` degrees of freedom, by Wilson and
    Hilferty's normal approximation: constant time, where the exact series takes k terms.
    Over the SpamAssassin corpus it ranks every message as the exact series does."""
    if x2 <= 0.0:
        return 0.0, math.log(_TINY)
    spread = 2.0 / (9.0 * freedom)
    z = (math.cbrt(x2 / freedom) - (1.0 - spread)) / math.sqrt(spread)
    return _log_normal_tail(z), _log_normal_tail(-z)


def _log_sum(a: float, b: float) -> float:
    """ln(e^a + e^b), without leaving the logarithms."""
    high, low = (a, b) if a >= b else (b, a)
    return high + math.log1p(math.exp(low - high))


def fisher_evidence(ln_f: float, ln_not_f: float, clues: int) -> float:
    """The logit of SpamBayes's indicator I = (1 + S - H) / 2, from the clues' Σ ln f and
    Σ ln(1 - f). With H = 1 - tail(Σ ln f) and S = 1 - tail(Σ ln(1 - f)),
    I = (tail_h + 1 - tail_s) / 2 and 1 - I = (1 - tail_h + tail_s) / 2, each a sum of
    two probabilities known by their logarithms: the logit keeps its precision where the
    indicator itself rounds to 0 or 1."""
    upper_h, lower_h = log_chi2_tails(-2.0 * ln_f, 2 * clues)
    upper_s, lower_s = log_chi2_tails(-2.0 * ln_not_f, 2 * clues)
    return _log_sum(upper_h, lower_s) - _log_sum(lower_h, upper_s)


def _probability(packed: int, spam_messages: int, ham_messages: int) -> float:
    spam, ham = packed >> 32, packed & 0xFFFFFFFF
    spam_ratio = spam / spam_messages
    n = spam + ham
    p = spam_ratio / (spam_ratio + ham / ham_messages)
    return (STRENGTH * UNKNOWN + n * p) / (STRENGTH + n)


def _clue(f: float) -> float:
    """f, or NOT_A_CLUE when it is too close to 0.5 to be one."""
    return NOT_A_CLUE if _HAMMY < f < _SPAMMY else f


def _combine(found: list[float]) -> Judgement:
    """Fisher's method over the clues among a message's tokens' f (NOT_A_CLUE for the
    rest), in the tokens' order: compress sorts them out in C."""
    clue_f = list(compress(found, found))  # NOT_A_CLUE is 0.0, so false
    if not clue_f:
        return NOTHING_KNOWN
    where = list(compress(range(len(found)), found))
    strengths = [abs(f - 0.5) for f in clue_f]
    if len(clue_f) > MAX_CLUES:
        kept = heapq.nlargest(MAX_CLUES, range(len(clue_f)), key=strengths.__getitem__)
        clue_f = [clue_f[i] for i in kept]
        where = [where[i] for i in kept]
        strengths = [strengths[i] for i in kept]
    # S > 0 keeps every f strictly between 0 and 1: both logarithms are finite.
    ln_f = sum(map(math.log, clue_f))
    ln_not_f = sum(map(math.log, [1.0 - f for f in clue_f]))
    evidence = fisher_evidence(ln_f, ln_not_f, len(clue_f))
    shown = heapq.nlargest(_SHOWN_CLUES, range(len(clue_f)), key=strengths.__getitem__)
    return Judgement(evidence, tuple((where[i], clue_f[i]) for i in shown))


def _native_combine(found: list[float]) -> Judgement:
    """_combine, in C."""
    said = _native.combine(found)
    return NOTHING_KNOWN if said is None else Judgement(*said)


_combine_clues = _combine if _native is None else _native_combine


def judge(
    hashes: Sequence[int], tokens: TokenCounts, spam_messages: int, ham_messages: int
) -> Judgement:
    """What statistics (`tokens`: hash to packed counts, model.pack) say of a message's
    token hashes."""
    if spam_messages == 0 or ham_messages == 0:
        return NOTHING_KNOWN  # one side only: every known token would look like it
    found = tokens.get
    return _combine_clues(
        [
            NOT_A_CLUE
            if not (packed := found(token))
            else _clue(_probability(packed, spam_messages, ham_messages))
            for token in hashes
        ]
    )


def _native_judge_words(
    words: Sequence[str], hasher: TokenHasher, statistics: Statistics
) -> Judgement:
    """reference_judge_words, in C."""
    spam_messages, ham_messages = statistics.spam_messages, statistics.ham_messages
    if spam_messages == 0 or ham_messages == 0:
        return NOTHING_KNOWN
    said = _native.judge_words(
        words,
        statistics.word_memo,  # type: ignore[arg-type]  # native: its WordMemo (model.py)
        statistics.tokens,
        hasher.key,
        spam_messages,
        ham_messages,
    )
    return NOTHING_KNOWN if said is None else Judgement(*said)


def reference_judge_words(
    words: Sequence[str], hasher: TokenHasher, statistics: Statistics
) -> Judgement:
    """judge() of a message's words, each word's f looked up once in the statistics'
    memo (Statistics.word_memo): a form's words repeat, and their f stays until the
    statistics change. Only a word not seen since is hashed and its counts read."""
    spam_messages, ham_messages = statistics.spam_messages, statistics.ham_messages
    if spam_messages == 0 or ham_messages == 0:
        return NOTHING_KNOWN
    memo = statistics.word_memo
    remembered = memo.get
    clues = list(map(remembered, words))
    if None in clues:
        found = statistics.tokens.get
        for index, known in enumerate(clues):
            if known is not None:
                continue
            packed = found(hasher.hash(words[index]))
            clue = (
                NOT_A_CLUE
                if not packed
                else _clue(_probability(packed, spam_messages, ham_messages))
            )
            if len(memo) < WORD_MEMO:
                memo[words[index]] = clue
            clues[index] = clue
    return _combine(clues)  # type: ignore[arg-type]  # no None is left


judge_words = reference_judge_words if _native is None else _native_judge_words


def _with_tokens(words: Sequence[str], judgement: Judgement) -> Said:
    return Said(judgement.evidence, tuple((words[index], f) for index, f in judgement.clues))


def judge_listed(words: Sequence[str], hasher: TokenHasher, statistics: Statistics) -> Said:
    """judge_text() of tokens already listed (tokens.TokenParts.listed), where the caller
    needed the list anyway: no second reading of the text."""
    return _with_tokens(words, judge_words(words, hasher, statistics))


def reference_judge_text(parts: TokenParts, hasher: TokenHasher, statistics: Statistics) -> Said:
    """judge_words() of the submission's tokens (tokens.token_parts), with its clues'
    tokens."""
    words = parts.listed()
    return _with_tokens(words, reference_judge_words(words, hasher, statistics))


def _native_judge_text(parts: TokenParts, hasher: TokenHasher, statistics: Statistics) -> Said:
    """reference_judge_text, in C, reading the words straight from the text: no str is
    made for a word unless it is one of the clues shown."""
    spam_messages, ham_messages = statistics.spam_messages, statistics.ham_messages
    if spam_messages == 0 or ham_messages == 0:
        return NOTHING_SAID
    said = _native.judge_text(
        *parts,
        statistics.word_memo,  # type: ignore[arg-type]  # native: its WordMemo (model.py)
        statistics.tokens,
        hasher.key,
        spam_messages,
        ham_messages,
    )
    return NOTHING_SAID if said is None else Said(*said)


judge_text = reference_judge_text if _native is None else _native_judge_text
