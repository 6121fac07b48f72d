"""What the native content heuristics (domain/native/heuristics.c) take as given of Python's
str and re, read over every character; and the phrases they accept."""

from __future__ import annotations

import re

import pytest

from intake.domain import scoring
from tests.conftest import built

try:
    from intake.domain.native import heuristics
except ImportError:  # an install without a C compiler: built() says so
    heuristics = None  # type: ignore[assignment]

# Every character a str may hold, lone surrogates too.
_EVERY = "".join(map(chr, range(0x110000)))
_NOT_ASCII = _EVERY[128:]


def test_lowering_turns_no_character_into_a_link_s_nor_whitespace_into_anything_else() -> None:
    """The links are sought in the lowered text: the C reads the text itself, lowering
    each ASCII letter, which is the same only if no other character lowers into one of
    a link's characters and whitespace stays whitespace."""
    for char in (c for c in _EVERY if c.lower() != c):
        lowered = char.lower()
        assert not char.isspace()
        assert not any(c.isspace() for c in lowered), char
        if not char.isascii():
            assert not set(lowered) & set("htpsw:/."), char


def test_re_folds_into_the_patterns_letters_only_the_characters_the_c_folds() -> None:
    """Under re.IGNORECASE a phrase's or a markup link's letter matches its ASCII upper
    case and, beyond ASCII, only İ and ı (i), ſ (s) and the Kelvin sign (k)."""
    folds = {"i": {"\u0130", "\u0131"}, "s": {"\u017f"}, "k": {"\u212a"}}
    letters = set("".join(scoring.SPAM_PHRASES)) | set("urlahref")
    for letter in letters:
        beyond_ascii = set(re.findall(re.escape(letter), _NOT_ASCII, re.IGNORECASE))
        assert beyond_ascii == folds.get(letter, set()), letter


def test_re_s_classes_are_str_s() -> None:
    """\\s is str.isspace, \\w str.isalnum or `_`, and [^\\W\\d_] str.isalnum but not
    str.isdecimal, as the C reads them."""
    assert re.findall(r"\s", _EVERY) == [c for c in _EVERY if c.isspace()]
    assert re.findall(r"\w", _EVERY) == [c for c in _EVERY if c.isalnum() or c == "_"]
    letters = [c for c in _EVERY if c.isalnum() and not c.isdecimal()]
    assert re.findall(r"[^\W\d_]", _EVERY) == letters


def test_a_phrase_given_twice_counts_once() -> None:
    module = built(heuristics, "heuristics")
    findings = module.Heuristics(("casino", "casino", "viagra")).findings

    assert findings("Casino, casino and viagra")[2] == 2
    assert findings("Caſino, casino and viagra")[2] == 3  # lowered, ſ stays ſ


@pytest.mark.parametrize(
    "phrase",
    ["", "Casino", "caſino", " casino", "-casino", "%"],
)
def test_a_phrase_is_lower_case_ascii_starting_with_a_word_character(phrase: str) -> None:
    module = built(heuristics, "heuristics")
    with pytest.raises(ValueError, match="lower case"):
        module.Heuristics(("viagra", phrase))
