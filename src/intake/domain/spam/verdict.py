"""The one number a form's threshold compares (docs/scoring.md, "The score").

A workspace whose owners have taught nothing is scored by the heuristics alone, in their
points, exactly as before the filter learned. As its owners teach both kinds, the
learned filter takes over: once CONFIDENT_AFTER messages of each kind are taught, the
score is the filter's evidence on the points' scale,
    points = MIDPOINT + (evidence - BOUNDARY) × POINTS_PER_EVIDENCE,
so that the default threshold (5) sits where the filter is BOUNDARY natural-log units sure
of spam. The heuristics then count through the tokens they add (`heuristic:links`, ...),
weighted by what owners taught. Before that the two are blended by how much was taught.

The instance's layer (what the other workspaces of the instance taught) speaks only where
the workspace's own evidence is thin, and never for more than INSTANCE_SHARE of the form's
threshold: another workspace's teaching cannot on its own make this one's mail spam.
"""

from __future__ import annotations

from intake.domain.model import FieldData
from intake.domain.scoring import Score, score
from intake.domain.spam.classifier import Said, judge, judge_listed, judge_text
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.model import Evidence, Statistics
from intake.domain.spam.tokens import token_parts

MIDPOINT = 5.0
BOUNDARY = 1.0
POINTS_PER_EVIDENCE = 0.5
CONFIDENT_AFTER = 10
INSTANCE_SHARE = 0.5
MAX_REASONS = 12
MAX_REASON_CHARS = 80
_CLUE_CHARS = 60


class _Others:
    """The instance's counts less the workspace's own: what the other workspaces taught.
    Packed counts subtract as pairs (no borrow while each part of the instance's is at
    least the workspace's); a cache that read the two apart may see less, taken as none."""

    def __init__(self, instance: Statistics, own: Statistics) -> None:
        self._instance = instance.tokens
        self._own = own.tokens

    def get(self, token: int) -> int | None:
        total = self._instance.get(token)
        if not total:
            return None
        mine = self._own.get(token, 0)
        spam, ham = (total >> 32) - (mine >> 32), (total & 0xFFFFFFFF) - (mine & 0xFFFFFFFF)
        return (spam << 32) | ham if spam >= 0 and ham >= 0 else None


def confidence(statistics: Statistics) -> float:
    """0 with nothing taught, 1 once CONFIDENT_AFTER messages of each kind are."""
    return _confidence(statistics.spam_messages, statistics.ham_messages)


def _confidence(spam_messages: int, ham_messages: int) -> float:
    return min(1.0, min(spam_messages, ham_messages) / CONFIDENT_AFTER)


def learned_points(evidence: float) -> float:
    return MIDPOINT + (evidence - BOUNDARY) * POINTS_PER_EVIDENCE


# Each clue's f as its reason shows it, worked out once: a float's formatting costs as
# much as judging a dozen words, and a workspace's clues share few values. Bounded.
_F_TEXTS: dict[float, str] = {}
_F_TEXTS_KEPT = 4_096


def _f_text(f: float) -> str:
    text = _F_TEXTS.get(f)
    if text is None:
        text = f"{f:.2f}"
        if len(_F_TEXTS) < _F_TEXTS_KEPT:
            _F_TEXTS[f] = text
    return text


def _clue_reasons(said: Said) -> list[str]:
    return [f"{token[:_CLUE_CHARS]}={_f_text(f)}" for token, f in said.clues]


def spam_score(
    data: FieldData,
    subject: str | None,
    reply_to: str | None,
    *,
    hasher: TokenHasher,
    evidence: Evidence,
    threshold: float,
) -> Score:
    heuristic = score(data, subject)
    own, instance = evidence.own, evidence.instance
    trust = confidence(own)
    # What the other workspaces taught (their tokens are _Others').
    others_spam = instance.spam_messages - own.spam_messages
    others_ham = instance.ham_messages - own.ham_messages
    others_trust = 0.0 if trust >= 1.0 else _confidence(others_spam, others_ham)
    if trust == 0.0 and others_trust == 0.0:
        return heuristic
    parts = token_parts(data, subject, reply_to, heuristic.reasons)
    reasons = list(heuristic.reasons)
    points = heuristic.points
    words: list[str] | None = None  # listed only where the instance's layer speaks
    if others_trust > 0.0:
        words = parts.listed()
        hashes = hasher.hash_all(words)
        said = judge(hashes, _Others(instance, own), others_spam, others_ham)
        shift = min((said.evidence - BOUNDARY) * POINTS_PER_EVIDENCE, INSTANCE_SHARE * threshold)
        points += others_trust * shift
        # Its evidence only, never its clues: a clue's f, read from the other workspaces'
        # counts, would let an owner test word by word what their mail holds.
        reasons.append(f"instance:{said.evidence:+.1f}")
    if trust > 0.0:
        told = judge_text(parts, hasher, own) if words is None else judge_listed(words, hasher, own)
        points = (1.0 - trust) * points + trust * learned_points(told.evidence)
        reasons.append(f"filter:{told.evidence:+.1f}")
        reasons.extend(_clue_reasons(told))
    return Score(
        points=points, reasons=tuple([r[:MAX_REASON_CHARS] for r in reasons[:MAX_REASONS]])
    )
