"""The native content heuristics (intake.domain.native.heuristics) find exactly what their
pure-Python reference, scoring.text_findings, finds: the same links, markup link,
phrases, gibberish words and shouting, whatever the text; and score() gives the same
points, bit for bit, and the same reasons in the same order, with either."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intake.domain import scoring
from intake.domain.model import FieldData
from tests.conftest import built, examples

try:
    from intake.domain.native import heuristics
except ImportError:  # an install without a C compiler: built() says so
    heuristics = None  # type: ignore[assignment]

# The characters re folds into a phrase's letters (İ and ı into i, ſ into s, the Kelvin
# sign into k), and a phrase written with each of them.
_FOLDS = {"i": ["İ", "ı", "I"], "s": ["ſ", "S"], "k": ["\u212a", "K"]}


def _written_otherwise(phrase: str) -> list[str]:
    return [phrase.replace(letter, other) for letter, others in _FOLDS.items() for other in others]


# What the heuristics read apart: links and their near misses, markup links, the phrases
# (in any case, with re's folded letters, run on, inside words), long letter runs with
# and without vowels and `sch`/`ch`, whitespace of every kind (\x1c-\x1f are whitespace
# to str and re), word characters that are not letters (digits, `_`, ², ½, ٣), letters
# of other scripts, capitals that are no letters (Ⓐ) and letters with no case.
_PIECES = [
    *["http://", "https://", "HTTPS://", "hTtP://", "http:/", "https:", "http", "://"],
    *["www.", "WWW.", "www", "wwww.", "x.org", "/path?a=b"],
    *["[url=", "[URL]", "[url", "[ur", "url]", "<a href", "<A\tHREF", "<a\x1chref"],
    *["<a  href", "<ahref", "<a", "href", "<", "["],
    *scoring.SPAM_PHRASES,
    *[phrase.upper() for phrase in scoring.SPAM_PHRASES],
    *[variant for phrase in scoring.SPAM_PHRASES[:6] for variant in _written_otherwise(phrase)],
    *["specialist", "contact now", "casinos", "100%", "free", "guest", "act"],
    *["Rechtsschutzversicherung", "Schwarzschildradius", "bcdfghjklmnp", "rhythms"],
    *["strengthsstrengths", "SCHSCHSCHSCH", "sch", "ch", "CH", "Sch", "aeiouyaeiouy"],
    *["xxxxxxxxxxxx", "Xxxxxxxxxxxxx", "abcdefghijklmnopqrstuvwxyz", "qwrtpsdfgh"],
    *["SHOUTING LOUDLY AT YOU", "ABCDEFGHIJKLMNOPQRST", "Ⓐ", "ǅ", "ÉÜÖ", "ß", "é"],
    *[" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f"],
    *["\x85", "\xa0", "\u2003", "\u3000", "\u2028"],
    *["_", "1", "0", "9", "²", "½", "٣", "Ⅻ", "%", ".", "/", ":", "-", "'"],
    *["İ", "ı", "ſ", "\u212a", "ж", "日本語", "😀", "\u0307", "\ud800"],
]
_ASCII_PIECES = [piece for piece in _PIECES if piece.isascii()]


def _texts(pieces: list[str], chars: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(pieces), st.text(chars, max_size=6))
    return st.lists(piece, max_size=40).map("".join)


_ASCII_TEXT = _texts(_ASCII_PIECES, st.characters(codec="ascii"))
_ANY_TEXT = _texts(_PIECES, st.characters())


def _native() -> Callable[[str], scoring.Findings]:
    built(heuristics, "heuristics")
    return heuristics.Heuristics(scoring.SPAM_PHRASES).findings


@settings(max_examples=examples(500), deadline=None)
@given(text=_ASCII_TEXT)
def test_an_ascii_text_s_findings_are_the_reference_s(text: str) -> None:
    assert _native()(text) == scoring.text_findings(text)


@settings(max_examples=examples(500), deadline=None)
@given(text=_ANY_TEXT)
def test_any_text_s_findings_are_the_reference_s(text: str) -> None:
    assert _native()(text) == scoring.text_findings(text)


_TEXT = st.one_of(_ASCII_TEXT, _ANY_TEXT)
_VALUES = st.one_of(_TEXT, st.lists(_TEXT, max_size=3))


@settings(max_examples=examples(300), deadline=None)
@given(
    data=st.dictionaries(st.sampled_from(["name", "email", "message", "x"]), _VALUES),
    subject=st.one_of(st.none(), _TEXT),
)
def test_a_submission_s_score_is_the_reference_s(data: FieldData, subject: str | None) -> None:
    built(heuristics, "heuristics")
    assert scoring._findings is not scoring.text_findings  # score() reads natively
    native = scoring.score(data, subject)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scoring, "_findings", scoring.text_findings)
        reference = scoring.score(data, subject)
    assert native == reference


_SCALARS = st.one_of(_TEXT, st.integers(), st.floats(allow_nan=False), st.booleans(), st.none())
_NESTED = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=examples(200), deadline=None)
@given(data=st.dictionaries(st.sampled_from(["name", "email", "message", "x"]), _NESTED))
def test_a_submission_scores_as_the_list_of_its_values(data: FieldData) -> None:
    """score() reads a submission's texts depth first, in order, whether its values are
    all texts or not: as one list of them all."""
    assert scoring.score(data) == scoring.score({"all": list(data.values())})
