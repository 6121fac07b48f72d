"""Properties of the learning filter's classifier (docs/scoring.md)."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from intake.domain.spam.classifier import MIN_DEVIATION, STRENGTH, UNKNOWN, judge
from intake.domain.spam.model import pack
from tests.conftest import examples


def _f(spam: int, ham: int, spam_messages: int, ham_messages: int) -> float:
    if spam + ham == 0:
        return UNKNOWN
    spam_ratio = spam / spam_messages
    p = spam_ratio / (spam_ratio + ham / ham_messages)
    return (STRENGTH * UNKNOWN + (spam + ham) * p) / (STRENGTH + spam + ham)


_COUNTS = st.dictionaries(
    st.integers(0, 30), st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=30
)


@settings(max_examples=examples(300), deadline=None)
@given(
    counts=_COUNTS,
    message=st.lists(st.integers(0, 30), min_size=1, max_size=20, unique=True),
    more=st.integers(1, 20),
    pick=st.integers(0, 19),
    clue=st.tuples(st.integers(20, 40), st.integers(0, 3)),
)
def test_the_evidence_rises_with_spam_evidence(
    counts: dict[int, tuple[int, int]],
    message: list[int],
    more: int,
    pick: int,
    clue: tuple[int, int],
) -> None:
    """More spam seen with one of a message's spam clues (the totals the same) never makes
    the message look less like spam. (A token that crosses into or out of the clues
    changes the chi-square's degrees of freedom, which Fisher's method does not promise
    to weigh monotonically: the property is the classifier's, on its clues.)"""
    spam_messages = 60 + more
    ham_messages = 60
    token = message[pick % len(message)]
    counts = {**counts, token: clue}
    before = {t: pack(s, h) for t, (s, h) in counts.items()}
    spam, ham = clue
    f = _f(spam, ham, spam_messages, ham_messages)
    assume(f >= UNKNOWN + MIN_DEVIATION)
    after = {**before, token: pack(spam + more, ham)}
    was = judge(message, before, spam_messages, ham_messages).evidence
    now = judge(message, after, spam_messages, ham_messages).evidence
    assert now >= was - 1e-9


@settings(max_examples=examples(100), deadline=None)
@given(counts=_COUNTS, message=st.lists(st.integers(0, 30), max_size=20, unique=True))
def test_the_order_of_a_messages_tokens_does_not_matter(
    counts: dict[int, tuple[int, int]], message: list[int]
) -> None:
    tokens = {t: pack(s, h) for t, (s, h) in counts.items()}
    one = judge(message, tokens, 50, 50).evidence
    other = judge(list(reversed(message)), tokens, 50, 50).evidence
    assert abs(one - other) < 1e-9
