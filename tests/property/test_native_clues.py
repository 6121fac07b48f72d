"""The native classifier (intake.domain.native.clues) gives exactly what its pure-Python
reference gives: the same token hashes, the same evidence to the bit, the same clues in
the same order, and the same word memo."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from intake.domain.spam import classifier, tokens
from intake.domain.spam.classifier import MAX_CLUES, Judgement
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.model import Statistics, pack
from tests.conftest import built, examples

try:
    from intake.domain.native import clues
except ImportError:  # an install without a C compiler: built() says so
    clues = None  # type: ignore[assignment]

_KEYS = st.binary(min_size=16, max_size=64)
# Tokens as the tokenizer makes them, and any str: other scripts, lone surrogates.
_TOKENS = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(codec="utf-8"), max_size=200),
    st.sampled_from(["", "subject:free", "host:example.com", "é日😀", "\ud800x", "x" * 300]),
)
# An f as _clue leaves it: 0.0 (no clue), or at least MIN_DEVIATION from 0.5, with ties.
_F = st.one_of(
    st.just(0.0),
    st.sampled_from([0.01, 0.2, 0.8, 0.99, 0.5 - 0.3, 0.5 + 0.3]),
    st.floats(0.0001, 0.2),
    st.floats(0.8, 0.9999),
)


def _judged(judgement: Judgement) -> tuple[float, tuple[tuple[int, float], ...]] | None:
    return None if judgement is classifier.NOTHING_KNOWN else (judgement.evidence, judgement.clues)


@settings(max_examples=examples(300), deadline=None)
@given(key=_KEYS, token=_TOKENS)
def test_a_token_s_hash_is_hashlib_s(key: bytes, token: str) -> None:
    native = built(clues, "clues")
    assert native.token_hash(key, token) == TokenHasher(key).reference_hash(token)


@settings(max_examples=examples(300), deadline=None)
@given(
    ln_f=st.floats(-5000.0, 0.0),
    ln_not_f=st.floats(-5000.0, 0.0),
    count=st.integers(1, MAX_CLUES),
)
def test_the_evidence_of_the_sums_is_the_same_to_the_bit(
    ln_f: float, ln_not_f: float, count: int
) -> None:
    native = built(clues, "clues")
    assert native.fisher_evidence(ln_f, ln_not_f, count) == classifier.fisher_evidence(
        ln_f, ln_not_f, count
    )


@settings(max_examples=examples(300), deadline=None)
@given(found=st.lists(_F, max_size=400))
def test_the_clues_chosen_and_combined_are_the_reference_s(found: list[float]) -> None:
    """Past MAX_CLUES clues the strongest are kept, the earlier of equal ones first, and
    their logarithms summed in that order."""
    native = built(clues, "clues")
    assert native.combine(found) == _judged(classifier._combine(found))


@settings(max_examples=examples(200), deadline=None)
@given(
    words=st.lists(st.text(max_size=12), max_size=250),
    counts=st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), min_size=1, max_size=250),
    messages=st.tuples(st.integers(1, 80), st.integers(1, 80)),
    remembered=st.integers(0, 40),
)
def test_a_message_s_words_are_judged_as_the_reference_judges_them(
    words: list[str],
    counts: list[tuple[int, int]],
    messages: tuple[int, int],
    remembered: int,
) -> None:
    """Some words counted, some not, some already in the memo: the same judgement, and
    the memo holds the same words with the same f afterwards."""
    native_judge = built(clues, "clues")
    assert native_judge is not None
    hasher = TokenHasher(b"k" * 32)
    tokens = {
        hasher.hash(word): pack(*counts[n % len(counts)]) for n, word in enumerate(words) if n % 3
    }

    def statistics() -> Statistics:
        known = Statistics(messages[0], messages[1], tokens)
        classifier.reference_judge_words(words[:remembered], hasher, known)
        return known

    reference, native = statistics(), statistics()
    expected = classifier.reference_judge_words(words, hasher, reference)
    assert classifier._native_judge_words(words, hasher, native) == expected
    assert dict(native.word_memo.items()) == dict(reference.word_memo.items())


@settings(max_examples=examples(200), deadline=None)
@given(remembered=st.dictionaries(_TOKENS, _F, max_size=80), asked=st.lists(_TOKENS, max_size=20))
def test_the_word_memo_remembers_as_a_dict_does(
    remembered: dict[str, float], asked: list[str]
) -> None:
    """The native memo holds each word apart, by its characters, surrogates and other
    scripts included: what a dict would hold, and it forgets all at once."""
    native = built(clues, "clues")
    memo = native.WordMemo()
    for word, f in remembered.items():
        memo[word] = 1.0  # then changed: the latest f is kept
        memo[word] = f
    assert len(memo) == len(remembered)
    assert dict(memo.items()) == remembered
    for word in asked:
        assert memo.get(word) == remembered.get(word)
        assert memo.get(word, -1.0) == remembered.get(word, -1.0)
    memo.clear()
    assert len(memo) == 0
    assert memo.get("x") is None


def test_judging_and_forgetting_keep_no_memory_behind() -> None:
    """What the C allocates for a message (its tokens' bytes, fingerprints and f) is
    freed with it, and a memo's table and words with the memo."""
    built(clues, "clues")
    hasher = TokenHasher(b"k" * 32)
    taught = {hasher.hash(w): pack(3, 0) for w in ("free", "money", "subject:offer")}
    statistics = Statistics(3, 3, {**taught, hasher.hash("meeting"): pack(0, 3)})
    parts = tokens.token_parts(
        {"message": "Free money, meeting http://a.example/x é日本 " * 30}, "Offer", "a@b.example"
    )
    listed = parts.listed()

    def judge() -> None:
        classifier._native_judge_text(parts, hasher, statistics)
        classifier._native_judge_words(listed, hasher, statistics)
        memo = clues.WordMemo()
        for n in range(500):
            memo[f"word{n}"] = 0.25
        memo.clear()
        memo["again"] = 0.75

    judge()  # the statistics' memo learns the message's words once
    tracemalloc.start()
    try:
        judge()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            judge()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 4_096
