"""Properties of the learning filter's classifier (docs/scoring.md)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from intake.domain.spam.classifier import judge
from intake.domain.spam.model import pack

_COUNTS = st.dictionaries(
    st.integers(0, 30), st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=30
)


@settings(max_examples=200, deadline=None)
@given(
    counts=_COUNTS,
    message=st.lists(st.integers(0, 30), min_size=1, max_size=20, unique=True),
    more=st.integers(1, 20),
    pick=st.integers(0, 19),
)
def test_the_evidence_rises_with_spam_evidence(
    counts: dict[int, tuple[int, int]], message: list[int], more: int, pick: int
) -> None:
    """More spam seen with one of the message's tokens (the totals the same) never
    makes the message look less like spam."""
    spam_messages = 60 + more
    ham_messages = 60
    before = {t: pack(s, h) for t, (s, h) in counts.items()}
    token = message[pick % len(message)]
    spam, ham = counts.get(token, (0, 0))
    after = {**before, token: pack(spam + more, ham)}
    was = judge(message, before, spam_messages, ham_messages).evidence
    now = judge(message, after, spam_messages, ham_messages).evidence
    assert now >= was - 1e-9


@settings(max_examples=100, deadline=None)
@given(counts=_COUNTS, message=st.lists(st.integers(0, 30), max_size=20, unique=True))
def test_the_order_of_a_messages_tokens_does_not_matter(
    counts: dict[int, tuple[int, int]], message: list[int]
) -> None:
    tokens = {t: pack(s, h) for t, (s, h) in counts.items()}
    one = judge(message, tokens, 50, 50).evidence
    other = judge(list(reversed(message)), tokens, 50, 50).evidence
    assert abs(one - other) < 1e-9
