"""Content scoring: cheap heuristics that add up points; at or over the form's threshold
the submission is kept as spam for review. The score is never shown to the sender.

The heuristics and their weights are documented in docs/scoring.md.
"""

from __future__ import annotations

import re
from collections import Counter

from attrs import frozen

from intake.domain.model import FieldData, texts_of

try:  # the native heuristics, when they were built (domain/native): text_findings in C
    from intake.domain.native import heuristics as _native_heuristics
except ImportError:  # pragma: no cover - an install without a C compiler
    _native_heuristics = None  # type: ignore[assignment]

LINK_POINTS_FIRST = 0.5
LINK_POINTS_EACH_MORE = 1.5
MARKUP_LINK_POINTS = 3.0
PHRASE_POINTS = 2.0
GIBBERISH_POINTS = 1.5
GIBBERISH_MAX = 3.0
SHOUTING_POINTS = 1.5
REPEATED_POINTS = 2.0

SPAM_PHRASES: tuple[str, ...] = (
    "viagra",
    "cialis",
    "casino",
    "payday loan",
    "crypto investment",
    "bitcoin investment",
    "binary options",
    "forex signals",
    "seo services",
    "rank your website",
    "first page of google",
    "backlinks",
    "guest post",
    "make money fast",
    "work from home",
    "earn money online",
    "100% free",
    "risk free",
    "click here",
    "buy now",
    "limited time offer",
    "act now",
    "hot singles",
    "adult dating",
    "weight loss",
    "wire transfer",
    "lottery winner",
    "you have won",
    "increase your sales",
    "web traffic",
)

# Sought in the lowered text: a pattern without IGNORECASE runs three times as fast.
_LINK = re.compile(r"(?:https?://|www\.)\S+")
_MARKUP_LINK = re.compile(r"\[url[=\]]|<a\s+href", re.IGNORECASE)
# Tried only where a run of letters starts: the same words, without trying each letter
# of a short one.
_WORD = re.compile(r"(?<![^\W\d_])[^\W\d_]{12,}")
_CONSONANT_RUN = re.compile(r"[bcdfghjklmnpqrstvwxz]{6,}", re.IGNORECASE)
# German writes one sound as `sch` or `ch`, so its compounds (`Rechtsschutzversicherung`)
# hold long runs of consonant letters but not of consonant sounds: each counts as one.
_ONE_SOUND = re.compile("s?ch", re.IGNORECASE)
_VOWELS = frozenset("aeiouyAEIOUY")


def _phrase_pattern(*, boundary: str, flags: re.RegexFlag) -> re.Pattern[str]:
    """The phrases grouped by their first letter, so that a word is tried against the
    few that start as it does, not against all of them."""
    groups: dict[str, list[str]] = {}
    for phrase in SPAM_PHRASES:
        groups.setdefault(phrase[0], []).append(re.escape(phrase[1:]))
    branches = "|".join(re.escape(c) + "(?:" + "|".join(rest) + ")" for c, rest in groups.items())
    return re.compile(boundary + "(?:" + branches + ")", flags)


# A phrase starts a word: "cialis" must not fire inside "specialist", nor "act now" inside
# "contact now". Its end may run on, so "casinos" and "backlinks" still count.
_PHRASES = _phrase_pattern(boundary=r"(?<!\w)", flags=re.IGNORECASE)
# Most texts are ASCII, where case folding and letters are plain: they are read lowered,
# with patterns that need no Unicode tables, and give what the patterns above would
# (before a phrase's first character, a word character, \b is (?<!\w)).
_ASCII_PHRASE_STARTS = {phrase: re.compile(r"\b" + re.escape(phrase)) for phrase in SPAM_PHRASES}
_LONG_WORD = 12
_ASCII_WORD = re.compile(r"[A-Za-z]{12,}")  # _LONG_WORD letters or more
_ASCII_LETTERS = bytes(range(ord("A"), ord("Z") + 1)) + bytes(range(ord("a"), ord("z") + 1))
_ASCII_CAPITALS = bytes(range(ord("A"), ord("Z") + 1))
# Every match of _LINK holds one of these in lower case: most texts hold neither.
_LINK_MARKS = ("http", "www.")


# (links, a markup link, distinct phrases, gibberish words, shouting)
Findings = tuple[int, bool, int, int, bool]


@frozen
class Score:
    points: float
    reasons: tuple[str, ...]

    def is_spam(self, threshold: float) -> bool:
        return self.points >= threshold


def _is_gibberish(word: str) -> bool:
    if not word.isascii():
        return False  # the vowel heuristic only knows Latin script
    vowels = sum(1 for ch in word if ch in _VOWELS)
    return vowels / len(word) < 0.2 or _CONSONANT_RUN.search(_ONE_SOUND.sub("s", word)) is not None


def _ascii_shouting(text: str) -> bool:
    raw = text.encode("ascii")
    letters = len(raw) - len(raw.translate(None, _ASCII_LETTERS))
    capitals = len(raw) - len(raw.translate(None, _ASCII_CAPITALS))
    return letters >= 20 and capitals / letters > 0.7


def _shouting(text: str) -> bool:
    if text.isascii():
        return _ascii_shouting(text)
    # filter and map call the methods from C: no bytecode runs per character.
    letters = list(filter(str.isalpha, text))
    return len(letters) >= 20 and sum(map(str.isupper, letters)) / len(letters) > 0.7


def _links(lowered: str) -> int:
    if not any(mark in lowered for mark in _LINK_MARKS):
        return 0
    return len(_LINK.findall(lowered))


def _phrases_and_words(text: str, lowered: str) -> tuple[set[str], list[str]]:
    """The distinct spam phrases (lowered) and the long words of `text` (`lowered` is
    text.lower())."""
    if text.isascii():
        # A substring search per phrase is C's fast search; the pattern, which tries every
        # position, runs only for the few found. (A map of lowered.__contains__ runs
        # slower on a short text: each call goes through a slot wrapper.)
        phrases = {
            phrase
            for phrase, starting in _ASCII_PHRASE_STARTS.items()
            if phrase in lowered and starting.search(lowered)
        }
        # A run of 12 letters lies within one whitespace-separated word: the pattern reads
        # only the long ones.
        long_runs = " ".join([word for word in text.split() if len(word) >= _LONG_WORD])
        return phrases, _ASCII_WORD.findall(long_runs) if long_runs else []
    phrases = {match.group(0).lower() for match in _PHRASES.finditer(text)}
    return phrases, _WORD.findall(text)


def _repeated(texts: list[str]) -> bool:
    """Whether one value (of three characters or more) is given three times or more."""
    # Most submissions give each value once, which a set of them all tells without
    # counting (calls from C: no bytecode runs per value). Lowering ASCII keeps a
    # value's length, so values of as many lengths are at least as many values: when
    # that already tells, no value is lowered (a message's may be long).
    stripped = list(map(str.strip, texts))
    if len(set(map(len, stripped))) > len(texts) - 2 and all(map(str.isascii, stripped)):
        return False
    # str.lower maps each character to one to three: values that lower alike lie within
    # a factor of three in length, so a message's long text, beside a name and an
    # address, is never lowered (for a text outside ASCII, the costliest part of scoring).
    lengths = sorted(map(len, stripped))
    if not any(lengths[i + 2] <= 3 * lengths[i] for i in range(len(lengths) - 2)):
        return False
    if len(set(map(str.lower, stripped))) > len(texts) - 2:
        return False
    repeated = Counter(t.strip().lower() for t in texts if len(t.strip()) >= 3)
    return bool(repeated) and repeated.most_common(1)[0][1] >= 3


def findings(data: FieldData, subject: str | None = None) -> tuple[str, ...]:
    """The heuristics' reasons alone: what the learning filter reads of them."""
    return score(data, subject).reasons


def text_findings(joined: str) -> Findings:
    """The heuristics' findings in a text, as the patterns above read it: the reference
    the native module's are held to."""
    lowered = joined.lower()
    markup = ("[" in joined or "<" in joined) and _MARKUP_LINK.search(joined) is not None
    phrases, words = _phrases_and_words(joined, lowered)
    gibberish = sum(1 for word in words if _is_gibberish(word))
    return _links(lowered), markup, len(phrases), gibberish, _shouting(joined)


_findings = (
    text_findings
    if _native_heuristics is None
    else _native_heuristics.Heuristics(SPAM_PHRASES).findings
)


def score(data: FieldData, subject: str | None = None) -> Score:
    texts = [value for value in data.values() if type(value) is str]
    if len(texts) < len(data):  # lists or objects: walked depth first, in order
        texts = [t for value in data.values() for t in texts_of(value)]
    if subject:
        texts.append(subject)
    points = 0.0
    reasons: list[str] = []
    links, markup, phrases, gibberish, shouting = _findings("\n".join(texts))

    if links:
        points += LINK_POINTS_FIRST + LINK_POINTS_EACH_MORE * (links - 1)
        reasons.append(f"links:{links}")
    if markup:
        points += MARKUP_LINK_POINTS
        reasons.append("markup-link")

    if phrases:
        points += PHRASE_POINTS * phrases
        reasons.append(f"phrases:{phrases}")

    if gibberish:
        points += min(GIBBERISH_MAX, GIBBERISH_POINTS * gibberish)
        reasons.append(f"gibberish:{gibberish}")

    if shouting:
        points += SHOUTING_POINTS
        reasons.append("shouting")

    if len(texts) >= 3 and _repeated(texts):
        points += REPEATED_POINTS
        reasons.append("repeated-values")

    return Score(points=points, reasons=tuple(reasons))
