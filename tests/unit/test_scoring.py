"""Content scoring: each heuristic adds its weight; real messages stay under the threshold."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intake.domain.model import DEFAULT_SPAM_THRESHOLD, FieldData
from intake.domain.scoring import (
    GIBBERISH_MAX,
    GIBBERISH_POINTS,
    LINK_POINTS_EACH_MORE,
    LINK_POINTS_FIRST,
    MARKUP_LINK_POINTS,
    PHRASE_POINTS,
    REPEATED_POINTS,
    SHOUTING_POINTS,
    Score,
    _repeated,
    score,
)
from tests.conftest import examples


def test_the_default_threshold_is_five() -> None:
    assert DEFAULT_SPAM_THRESHOLD == 5.0


def test_a_plain_message_scores_nothing() -> None:
    assert score({"name": "Ada", "message": "Could you call me back tomorrow?"}) == Score(0.0, ())


# --- each heuristic alone --------------------------------------------------------------


def test_one_link_adds_the_first_link_weight() -> None:
    result = score({"message": "My site: https://ada.example/portfolio"})

    assert result.points == LINK_POINTS_FIRST
    assert result.reasons == ("links:1",)


def test_each_further_link_adds_more_than_the_first() -> None:
    result = score({"message": "http://a.example www.b.example https://c.example/x"})

    assert result.points == LINK_POINTS_FIRST + 2 * LINK_POINTS_EACH_MORE
    assert result.reasons == ("links:3",)


def test_links_are_counted_across_every_field_and_value() -> None:
    result = score({"site": "https://a.example", "refs": ["https://b.example", "plain"]})

    assert result.reasons == ("links:2",)


@pytest.mark.parametrize(
    "text", ["[url]spam[/url]", "[URL=spam]x[/URL]", '<a href="/spam">x</a>', "<A  HREF=x>"]
)
def test_forum_or_html_link_markup_adds_its_weight(text: str) -> None:
    result = score({"message": text})

    assert result.points == MARKUP_LINK_POINTS
    assert result.reasons == ("markup-link",)


def test_a_spam_phrase_adds_its_weight_whatever_its_case() -> None:
    result = score({"message": "Get your Payday Loan here"})

    assert result.points == PHRASE_POINTS
    assert result.reasons == ("phrases:1",)


def test_each_distinct_phrase_adds_its_weight_once() -> None:
    result = score({"message": "casino casino CASINO, and also viagra"})

    assert result.points == 2 * PHRASE_POINTS
    assert result.reasons == ("phrases:2",)


@pytest.mark.parametrize(
    "text",
    [
        "I am a specialist in socialist history.",  # "cialis"
        "Please contact now, or tomorrow.",  # "act now"
        "She bought nowhere near enough.",
    ],
)
def test_a_phrase_inside_a_longer_word_does_not_count(text: str) -> None:
    assert score({"message": text}).points == 0.0


def test_a_gibberish_word_adds_its_weight() -> None:
    result = score({"name": "xkqjvbnmwrtzpl"})

    assert result.points == GIBBERISH_POINTS
    assert result.reasons == ("gibberish:1",)


def test_gibberish_is_capped() -> None:
    result = score({"a": "xkqjvbnmwrtzpl", "b": "qwrtzpsdfghjkl", "c": "sdkfjhsdkjfhskdjfh"})

    assert result.points == GIBBERISH_MAX
    assert result.reasons == ("gibberish:3",)


@pytest.mark.parametrize(
    "word",
    [
        "Internationalization",
        "Responsibilities",
        "Rhythmically",
        "Rechtsschutzversicherung",
        "Deutschschweizerischen",
        "Geschichtsschreibung",
        "Landschaftsschutzgebiet",
        "Gesellschaftsschicht",
        "Przedsiebiorstwo",
    ],
)
def test_long_real_words_are_not_gibberish(word: str) -> None:
    assert score({"message": word}).points == 0.0


def test_shouting_adds_its_weight() -> None:
    result = score({"message": "PLEASE CALL ME BACK RIGHT NOW ABOUT THIS"})

    assert result.points == SHOUTING_POINTS
    assert result.reasons == ("shouting",)


def test_a_short_capitalised_value_is_not_shouting() -> None:
    assert score({"code": "ABC DEF", "country": "UK"}).points == 0.0


def test_the_same_value_in_three_places_adds_its_weight() -> None:
    result = score({"a": "hello there", "b": " Hello There ", "c": ["HELLO THERE"]})

    assert result.points == REPEATED_POINTS
    assert result.reasons == ("repeated-values",)


@pytest.mark.parametrize(
    "values",
    [
        ["abc", "abcd", "abcde", "xyz"],  # as many lengths as values, nothing repeated
        ["İİİ", "i̇i̇i̇", "İİİ", "x"],  # lowering changes the length outside ASCII
        ["Straße", "STRASSE", "strasse", "y"],
        ["Grüße " * 200, "ann@example.com", "Grüße"],  # a long text beside short ones
        ["İİİ", "i̇i̇i̇", "İİİ", "Grüße " * 200],
    ],
)
def test_repeated_values_are_told_by_lowering_them(values: list[str]) -> None:
    """Values of as many lengths as there are values may be taken as all different only
    in ASCII, whose lowering keeps a length: what lowering every value would tell."""
    data: FieldData = {f"f{n}": value for n, value in enumerate(values)}
    lowered = [value.strip().lower() for value in values]
    expected = max(lowered.count(value) for value in lowered) >= 3

    assert ("repeated-values" in score(data).reasons) is expected


def test_short_values_repeated_do_not_count() -> None:
    assert score({"a": "ok", "b": "ok", "c": "ok", "d": "ok"}).points == 0.0


def test_the_subject_is_scored_with_the_data() -> None:
    assert score({"message": "hello"}, subject="Buy now").reasons == ("phrases:1",)


def test_nested_json_values_are_scored() -> None:
    result = score({"contact": {"notes": ["see https://a.example"]}, "n": 3, "t": True})

    assert result.reasons == ("links:1",)


def test_the_heuristics_add_up() -> None:
    result = score({"message": "BUY NOW AT HTTPS://X.EXAMPLE [URL]HTTPS://Y.EXAMPLE[/URL]"})

    assert (
        result.points
        == (LINK_POINTS_FIRST + LINK_POINTS_EACH_MORE + MARKUP_LINK_POINTS + PHRASE_POINTS)
        + SHOUTING_POINTS
    )
    assert result.reasons == ("links:2", "markup-link", "phrases:1", "shouting")


def test_a_score_is_spam_at_or_over_the_threshold() -> None:
    assert Score(5.0, ()).is_spam(5.0)
    assert Score(5.5, ()).is_spam(5.0)
    assert not Score(4.99, ()).is_spam(5.0)


# --- real messages ---------------------------------------------------------------------

ORDINARY: dict[str, FieldData] = {
    "english contact with one link": {
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "message": (
            "Hello! I saw your portfolio at https://example.com/work and would love to "
            "talk about a website redesign for our bakery. Could we schedule a call next "
            "week? Thanks, Ada"
        ),
    },
    "german with compounds and two links": {
        "name": "J\u00fcrgen M\u00fcller",
        "website": "https://beispiel.de",
        "message": (
            "Sehr geehrte Damen und Herren, ich interessiere mich f\u00fcr Ihre "
            "Dienstleistungen im Bereich Rechtsschutzversicherung und "
            "Haftpflichtversicherung. K\u00f6nnten Sie mir bitte ein unverbindliches "
            "Angebot zusenden? Die Unterlagen finden Sie unter "
            "https://beispiel.de/unterlagen. Mit freundlichen Gr\u00fc\u00dfen, J\u00fcrgen "
            "M\u00fcller, Gesch\u00e4ftsf\u00fchrer der Deutschschweizerischen "
            "Handelsgesellschaft"
        ),
    },
    "japanese": {
        "name": "\u5c71\u7530\u592a\u90ce",
        "message": (
            "\u304a\u4e16\u8a71\u306b\u306a\u3063\u3066\u304a\u308a\u307e\u3059\u3002"
            "\u5fa1\u793e\u306e\u30a6\u30a7\u30d6\u30b5\u30a4\u30c8\u3092\u62dd\u898b"
            "\u3057\u3001\u30b5\u30fc\u30d3\u30b9\u306b\u3064\u3044\u3066\u304a\u554f"
            "\u3044\u5408\u308f\u305b\u3044\u305f\u3057\u307e\u3059\u3002\u6765\u9031"
            "\u304a\u6253\u3061\u5408\u308f\u305b\u306e\u6a5f\u4f1a\u3092\u3044\u305f"
            "\u3060\u3051\u307e\u3059\u3067\u3057\u3087\u3046\u304b\u3002"
        ),
    },
    "russian": {
        "name": "\u0418\u0432\u0430\u043d \u041f\u0435\u0442\u0440\u043e\u0432",
        "message": (
            "\u0417\u0434\u0440\u0430\u0432\u0441\u0442\u0432\u0443\u0439\u0442\u0435! "
            "\u041c\u0435\u043d\u044f \u0438\u043d\u0442\u0435\u0440\u0435\u0441\u0443"
            "\u0435\u0442 \u0441\u043e\u0442\u0440\u0443\u0434\u043d\u0438\u0447\u0435"
            "\u0441\u0442\u0432\u043e \u0441 \u0432\u0430\u0448\u0435\u0439 \u043a\u043e"
            "\u043c\u043f\u0430\u043d\u0438\u0435\u0439. \u0421\u043f\u0430\u0441\u0438"
            "\u0431\u043e! https://example.ru"
        ),
    },
    "a specialist who works from home": {
        "message": (
            "I am a marketing specialist and I work from home. Please contact now or "
            "later via https://ada.example - I have references."
        ),
    },
}


@pytest.mark.parametrize("data", ORDINARY.values(), ids=list(ORDINARY))
def test_an_ordinary_message_scores_under_the_default_threshold(data: FieldData) -> None:
    assert not score(data).is_spam(DEFAULT_SPAM_THRESHOLD)


SPAM: dict[str, FieldData] = {
    "links and phrases": {
        "message": (
            "Best SEO services to rank your website on the first page of google! "
            "http://a.example http://b.example http://c.example"
        ),
    },
    "bbcode and a casino": {"message": "[url=http://casino.example]online casino[/url] act now"},
    "pharmacy in every field": {
        "name": "cheap viagra",
        "email": "spam@example.com",
        "message": "cheap viagra cheap cialis http://pills.example http://pills2.example",
        "subject": "cheap viagra",
    },
}


@pytest.mark.parametrize("data", SPAM.values(), ids=list(SPAM))
def test_obvious_spam_scores_at_or_over_the_default_threshold(data: FieldData) -> None:
    assert score(data).is_spam(DEFAULT_SPAM_THRESHOLD)


@pytest.mark.parametrize(
    "text",
    [
        "Best SEO services: rank your website, 100% free, act now! www.a.example",
        "contact now, a specialist in backlinks and casinos",
        "xkcdqwrtplmnbv and Rechtsschutzversicherung, supercalifragilistic",
        "PLEASE READ THIS AT ONCE, IT IS URGENT AND IMPORTANT",
        "[URL=http://a.example]x[/url] <A HREF=x> HTTPS://B.EXAMPLE",
        "Could you call me back on Tuesday afternoon? Thanks.",
    ],
)
def test_ascii_text_scores_as_it_does_beside_other_scripts(text: str) -> None:
    # ASCII text is read with patterns of its own; a non-ASCII value beside it (a dash,
    # neither a letter nor part of a word) sends the same text through the Unicode ones.
    assert score({"message": text}) == score({"message": text, "dash": "\u2014"})


@settings(max_examples=examples(300), deadline=None)
@given(texts=st.lists(st.sampled_from(["Ada", " ada ", "ADA", "hi", " hi", "x", ""]), max_size=7))
def test_repeated_values_are_one_of_three_characters_or_more_given_three_times(
    texts: list[str],
) -> None:
    counts = Counter(t.strip().lower() for t in texts if len(t.strip()) >= 3)
    assert _repeated(texts) == (max(counts.values(), default=0) >= 3)


@settings(max_examples=examples(300), deadline=None)
@given(
    texts=st.lists(
        st.text(alphabet="İi\u0307Ii ßSs\u03a3\u03c3é", max_size=12).map(lambda t: t * 3),
        min_size=3,
        max_size=6,
    )
)
def test_values_whose_lowering_grows_are_compared_lowered(texts: list[str]) -> None:
    # "İ" lowers to two characters: values of lengths apart may still lower alike.
    counts = Counter(t.strip().lower() for t in texts if len(t.strip()) >= 3)
    assert _repeated(texts) == (max(counts.values(), default=0) >= 3)
