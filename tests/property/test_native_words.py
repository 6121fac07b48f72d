"""The native word tokenizer (intake.domain.native.words) gives exactly the tokens of its
pure-Python reference, tokens._word_tokens and tokens._with_words: the same strs in the
same order, whatever the text, the prefix and the tokens already found; and the native
link finder (intake.domain.native.links) the hosts tokens._LINK finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from intake.domain.spam import classifier, tokens
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.model import Statistics, pack
from tests.conftest import built, examples

try:
    from intake.domain.native import clues, links, words
except ImportError:  # an install without a C compiler: built() says so
    clues = links = words = None  # type: ignore[assignment]

# What the tokenizer treats apart: its punctuation and edges, whitespace of every kind,
# digits of other scripts (and ², a digit that is not a decimal), letters of one, two and
# four bytes, and lone surrogates, which a str may hold though form data never does.
_SPECIAL = [
    *"!\"#&()*+,/:;<=>?[\\]^`{|}~.'-@_%$ \t\n\r\x0b\x0c\x1c\x85",
    *["\u00a0", "\u200b", "\u2028", "\u3000", "\u1680"],
    *["٣", "߀", "੧", "²", "①", "0", "7", "9"],
    *["é", "ß", "ÿ", "ж", "日", "本", "語", "😀", "𝔘", "\ud800", "\udfff"],
]
_CHARS = st.one_of(st.characters(), st.sampled_from(_SPECIAL))
_PIECES = st.one_of(
    st.text(_CHARS, max_size=30),
    st.sampled_from(["http://www.example.com/a?b=c", "1234567", "٣٣٣٣٣٣٣٣", "x" * 30]),
    st.sampled_from(["http://", "https://", "www.", "https:/", "http", "ww", "hTtp://"]),
    st.integers(0, 10**30).map(str),
)
_TEXTS = st.lists(_PIECES, max_size=40).map(" ".join)
_PREFIXES = st.sampled_from(["", "subject:", "é:", "日:", "😀:"])


def _both(text: str, prefix: str, before: list[str]) -> tuple[list[str], list[str]]:
    native = built(words, "words")
    reference: dict[str, None] = dict.fromkeys(before)
    accelerated: dict[str, None] = dict.fromkeys(before)
    tokens._word_tokens(text, prefix, reference)
    native.word_tokens(text, prefix, accelerated)
    return list(reference), list(accelerated)


@settings(max_examples=examples(400), deadline=None)
@given(text=_TEXTS, prefix=_PREFIXES)
def test_the_words_of_any_text_are_the_reference_s(text: str, prefix: str) -> None:
    reference, accelerated = _both(text, prefix, [])
    assert accelerated == reference


@settings(max_examples=examples(200), deadline=None)
@given(
    text=_TEXTS,
    prefix=_PREFIXES,
    before=st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=tokens.MAX_TOKENS),
)
def test_the_room_left_and_the_tokens_found_before_count_the_same(
    text: str, prefix: str, before: list[str]
) -> None:
    """A text's words fill what room MAX_TOKENS leaves, and those already found keep
    their place."""
    reference, accelerated = _both(text, prefix, before)
    assert accelerated == reference


def test_a_long_text_fills_the_room_as_the_reference_does() -> None:
    text = " ".join(f"word{n} {n:09d} {'y' * (25 + n % 40)}{n} 日{n % 7}" for n in range(900))
    reference, accelerated = _both(text, "", ["field:name"])
    assert len(reference) == tokens.MAX_TOKENS
    assert accelerated == reference


def test_the_kinds_of_tokens_come_in_the_reference_s_order() -> None:
    text = "Ünïcode  $9.99 '12345678' -- 2024 日本 " + "z" * 40 + " 日本. aaa AAA"
    reference, accelerated = _both(text.lower(), "subject:", [])
    assert reference == [
        "subject:ünïcode",
        "subject:9.99",
        "subject:#8",
        "subject:2024",
        "subject:aaa",
        "subject:long:z6",
        "subject:日本",
    ]
    assert accelerated == reference


@settings(max_examples=examples(300), deadline=None)
@given(
    before=st.lists(st.text(max_size=8).map("field:".__add__), max_size=tokens.MAX_TOKENS),
    subject=_TEXTS,
    body=_TEXTS,
)
def test_the_tokens_listed_with_the_words_are_the_reference_s(
    before: list[str], subject: str, body: str
) -> None:
    """with_words lists what is found and adds the subject's words and the body's without
    a dict: the same list as adding them to the dict and listing it."""
    native = built(words, "words")
    expected = tokens._with_words(dict.fromkeys(before), subject, body)
    assert native.with_words(dict.fromkeys(before), subject, body) == expected


@settings(max_examples=examples(400), deadline=None)
@given(text=_TEXTS)
def test_the_links_found_are_the_pattern_s(text: str) -> None:
    native = built(links, "links")
    assert native.links(text) == tokens._LINK.findall(text)
    assert native.links(text.lower()) == tokens._LINK.findall(text.lower())


def test_a_link_is_found_only_with_a_host_after_its_start() -> None:
    text = "see https://a.example/x and http:// www. www.b.example)c http://c.example:80 "
    assert built(links, "links").links(text) == tokens._LINK.findall(text)
    assert tokens._LINK.findall(text) == ["a.example", "b.example", "c.example:80"]


_HOSTS = st.lists(
    st.one_of(
        st.text(st.sampled_from("ab.@:-É日İ"), max_size=12),
        st.sampled_from(["Sub.Example.CO.uk.", "user@host.example:8080", "a.b.:80", "..", "@"]),
        st.text(max_size=100),
    ),
    max_size=25,
)


@settings(max_examples=examples(400), deadline=None)
@given(hosts=_HOSTS, before=st.lists(st.sampled_from(["host:a.b", "tld:b", "field:x"])))
def test_the_hosts_tokens_are_the_reference_s(hosts: list[str], before: list[str]) -> None:
    """The first 20 hosts, each lowered, without trailing dots, user or port."""
    native = built(links, "links")
    reference: dict[str, None] = dict.fromkeys(before)
    accelerated: dict[str, None] = dict.fromkeys(before)
    tokens._hosts_tokens(hosts, reference)
    native.host_tokens(hosts, accelerated)
    assert list(accelerated) == list(reference)


@settings(max_examples=examples(300), deadline=None)
@given(
    before=st.lists(st.one_of(_PIECES, st.text(max_size=8)).map("field:".__add__), max_size=40),
    subject=_TEXTS,
    body=_TEXTS,
    counted=st.integers(1, 5),
    remembered=st.integers(0, 60),
)
def test_the_text_is_judged_as_its_tokens_listed_are(
    before: list[str], subject: str, body: str, counted: int, remembered: int
) -> None:
    """judge_text reads the words straight from the text, with no str made for them: the
    same evidence, the same clues (their tokens as str) and the same word memo afterwards
    as judging the list tokens.py makes, whatever scripts, digits, surrogates or sizes
    the text holds, with the memo cold, warm or full."""
    built(words, "words")
    built(clues, "clues")
    hasher = TokenHasher(b"k" * 32)
    parts = tokens.TokenParts(dict.fromkeys(before), subject, body)
    listed = tokens._with_words(dict.fromkeys(before), subject, body)
    # Every `counted`-th token counted, half of them spammy: clues of both kinds.
    counts = {hasher.hash(t): pack(n % 7, (n * 3) % 5) for n, t in enumerate(listed[::counted])}

    def statistics() -> Statistics:
        known = Statistics(30, 40, counts)
        classifier.reference_judge_words(listed[:remembered], hasher, known)
        return known

    reference, native = statistics(), statistics()
    expected = classifier.reference_judge_text(parts, hasher, reference)
    assert classifier._native_judge_text(parts, hasher, native) == expected
    assert dict(native.word_memo.items()) == dict(reference.word_memo.items())
