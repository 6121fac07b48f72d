"""A submission scored with the native accelerators gets exactly the score and reasons of
the pure-Python reference: mails shaped as the benchmark's corpus makes them (a subject, a
message with links, markup, numbers and other scripts, a sender's address), taught, then
scored both ways."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intake.domain import validation
from intake.domain.model import FieldData
from intake.domain.scoring import findings
from intake.domain.spam import classifier, tokens, verdict
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.model import Evidence, Statistics, pack
from tests.conftest import built, examples

try:
    from intake.domain.native import clues, words
except ImportError:  # an install without a C compiler: built() says so
    clues = words = None  # type: ignore[assignment]

_WORDS = st.one_of(
    st.sampled_from(
        [
            "free",
            "money",
            "click",
            "here",
            "now",
            "offer",
            "meeting",
            "tomorrow",
            "report",
            "attached",
            "thanks",
            "unsubscribe",
            "viagra",
            "winner",
            "$1,000,000",
            "100%",
            "re:",
            "fwd:",
            "Ünïcode",
            "日本語",
            "😀",
            "<b>bold</b>",
            "http://example.com/x?y=1",
            "www.deals.biz/a",
            "https://sub.host.co.uk:8080/p",
            "555-0100",
            "1234567890",
            "user@example.org",
        ]
    ),
    st.text(max_size=12),
    st.integers(0, 10**12).map(str),
)
_TEXTS = st.lists(_WORDS, max_size=120).map(" ".join)
_MAILS = st.lists(
    st.tuples(
        _TEXTS,
        _TEXTS,
        st.sampled_from([None, "a@example.com", "Sales@Deals.BIZ", "x"]),
        st.booleans(),
    ),
    min_size=2,
    max_size=30,
)


def _data(message: str, sender: str | None) -> FieldData:
    return {"message": message} if sender is None else {"message": message, "email": sender}


@settings(max_examples=examples(60), deadline=None)
@given(mails=_MAILS)
def test_a_corpus_s_scores_and_reasons_are_the_reference_s(
    mails: list[tuple[str, str, str | None, bool]],
) -> None:
    built(words, "words")
    built(clues, "clues")
    hasher = TokenHasher(b"k" * 32)
    counts: dict[int, tuple[int, int]] = {}
    for subject, message, sender, spam in mails:
        data = _data(message, sender)
        found = tokens.tokens(data, subject, sender, findings(data, subject))
        for token in set(hasher.hashes(found)):
            was = counts.get(token, (0, 0))
            counts[token] = (was[0] + spam, was[1] + (not spam))
    spam_messages = sum(spam for *_, spam in mails)
    taught = {token: pack(*pair) for token, pair in counts.items()}

    def scores(hasher: TokenHasher) -> list[tuple[float, tuple[str, ...]]]:
        own = Statistics(spam_messages, len(mails) - spam_messages, taught)
        evidence = Evidence(own=own, instance=own)
        scored = []
        for subject, message, sender, _ in mails:
            data = _data(message, sender)
            reply_to = validation.reply_address(data, None)
            said = verdict.spam_score(
                data, subject, reply_to, hasher=hasher, evidence=evidence, threshold=5.0
            )
            scored.append((said.points, said.reasons))
        return scored

    accelerated = scores(TokenHasher(b"k" * 32))
    reference_hasher = TokenHasher(b"k" * 32)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reference_hasher, "_hashed", reference_hasher.reference_hash)
        patch.setattr(tokens, "_listed", tokens._with_words)
        patch.setattr(tokens, "_links", tokens._LINK.findall)
        patch.setattr(tokens, "_hosts", tokens._hosts_tokens)
        patch.setattr(verdict, "judge_text", classifier.reference_judge_text)
        assert scores(reference_hasher) == accelerated
