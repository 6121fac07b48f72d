"""A scope's token counts packed in C (native/token_counts.h, model.PackedCounts) hold and
give what the dict they were made from holds, in its order, and scoring reads them as it
reads the dict."""

from __future__ import annotations

import tracemalloc
from types import MappingProxyType

from hypothesis import given, settings
from hypothesis import strategies as st

from intake.domain.spam import classifier, tokens
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.model import Statistics, merged_counts, pack, packed_counts
from tests.conftest import built, examples

try:
    from intake.domain.native import clues
except ImportError:  # an install without a C compiler: built() says so
    clues = None  # type: ignore[assignment]

_TOKEN = st.one_of(
    st.integers(-(2**63), 2**63 - 1), st.integers(-3, 3), st.sampled_from([0, -(2**63)])
)
_PACKED = st.one_of(
    st.integers(0, 2**64 - 1), st.builds(pack, st.integers(0, 9), st.integers(0, 9))
)


@settings(max_examples=examples(200), deadline=None)
@given(held=st.dictionaries(_TOKEN, _PACKED, max_size=200), asked=st.lists(_TOKEN, max_size=30))
def test_packed_counts_hold_what_the_dict_holds(held: dict[int, int], asked: list[int]) -> None:
    built(clues, "clues")
    counts = packed_counts(held)
    assert type(counts) is not dict
    assert len(counts) == len(held)
    assert list(counts) == list(held)  # the order given: the store's most used first
    assert counts == held
    assert dict(counts.items()) == held
    for token in [*asked, *held]:
        assert counts.get(token) == held.get(token)
        assert counts.get(token, -1) == held.get(token, -1)
        assert (token in counts) is (token in held)
    assert counts.get(2**64) is None
    assert "x" not in counts  # type: ignore[comparison-overlap]


_CHANGE = st.dictionaries(st.integers(-3, 30), st.sampled_from([0, 1, pack(2, 0)]), max_size=12)


@settings(max_examples=examples(200), deadline=None)
@given(held=_CHANGE, change=_CHANGE, limit=st.integers(0, 40))
def test_a_change_is_merged_into_packed_counts_as_into_a_dict(
    held: dict[int, int], change: dict[int, int], limit: int
) -> None:
    built(clues, "clues")
    expected = merged_counts(held, change, limit)  # dicts: the Python
    merged = merged_counts(packed_counts(held), packed_counts(change), limit)
    assert type(merged) is type(packed_counts(held))
    assert list(merged.items()) == list(expected.items())


def test_statistics_made_from_a_dict_hold_its_counts_packed() -> None:
    # What scoring reads: the store's dicts become packed counts as Statistics are made.
    built(clues, "clues")
    statistics = Statistics(1, 1, {7: pack(1, 0), 9: pack(0, 2)})

    assert isinstance(statistics.tokens, clues.TokenCounts)
    assert dict(statistics.tokens) == {7: pack(1, 0), 9: pack(0, 2)}


def test_counts_a_pack_cannot_hold_stay_a_dict() -> None:
    for held in ({1: -1}, {1: 2**64}, {2**63: 1}, {1: 1.0}):
        assert packed_counts(held) is held  # type: ignore[arg-type]
    proxy = MappingProxyType({1: 2})
    assert packed_counts(proxy) is proxy
    assert Statistics(1, 1, {7: pack(1, 0)}).tokens == {7: pack(1, 0)}


@settings(max_examples=examples(60), deadline=None)
@given(
    text=st.text(max_size=300),
    taught=st.dictionaries(st.sampled_from(["free", "money", "the", "#10", "meeting"]), _PACKED),
)
def test_scoring_reads_packed_counts_as_it_reads_a_dict(text: str, taught: dict[str, int]) -> None:
    built(clues, "clues")
    hasher = TokenHasher(b"k" * 32)
    held = {hasher.hash(word): packed % 2**40 for word, packed in taught.items()}
    packed = Statistics(7, 5, held)
    plain = Statistics(7, 5, MappingProxyType(held))
    assert type(packed.tokens) is not type(plain.tokens)
    parts = tokens.token_parts({"message": text}, "Free money")
    assert classifier.judge_text(parts, hasher, packed) == classifier.judge_text(
        parts, hasher, plain
    )


def test_packed_counts_keep_no_memory_behind() -> None:
    built(clues, "clues")
    held = {n * 7919 - 5000: pack(n % 5, n % 3) for n in range(2_000)}

    def use() -> None:
        counts = packed_counts(held)
        assert counts.get(-5000) == pack(0, 0)
        assert len(list(counts)) == len(held)
        assert len(merged_counts(counts, packed_counts({-5000: 0, 1: 1}), 10_000)) == len(held)

    use()
    tracemalloc.start()
    try:
        use()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            use()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 4_096
