"""The learning filter's domain: tokens, keyed hashes, the classifier and the score."""

from __future__ import annotations

import itertools
import math

import pytest

from intake.domain.model import FieldData
from intake.domain.scoring import score
from intake.domain.spam.classifier import (
    MAX_CLUES,
    WORD_MEMO,
    fisher_evidence,
    judge,
    judge_text,
    judge_words,
    log_chi2_tails,
)
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.lessons import token_hashes
from intake.domain.spam.model import Evidence, Label, Statistics, pack, unpack
from intake.domain.spam.tokens import MAX_TOKENS, token_parts, tokens
from intake.domain.spam.verdict import INSTANCE_SHARE, spam_score

KEY = b"k" * 32
SPAM: FieldData = {"message": "Cheap pills, best casino bonus, click http://pills.example.ru now"}
HAM: FieldData = {"message": "Hello, could we move Thursday's meeting to Friday afternoon? Thanks"}


def _taught(hasher: TokenHasher, lessons: list[tuple[FieldData, Label]]) -> Statistics:
    counts: dict[int, int] = {}
    spam = ham = 0
    for data, label in lessons:
        for token in token_hashes(hasher, data, None, None):
            s, h = unpack(counts.get(token, 0))
            counts[token] = pack(s + (label is Label.SPAM), h + (label is Label.HAM))
        spam += label is Label.SPAM
        ham += label is Label.HAM
    return Statistics(spam, ham, counts)


def _variant(data: FieldData, n: int) -> FieldData:
    return {"message": f"{data['message']} ref{n}"}


def _instance_of(own: Statistics, others: Statistics) -> Statistics:
    """The instance's layer: every workspace's counts added up (packed counts add)."""
    return Statistics(
        others.spam_messages + own.spam_messages,
        others.ham_messages + own.ham_messages,
        {t: others.tokens.get(t, 0) + own.tokens.get(t, 0) for t in {*others.tokens, *own.tokens}},
    )


def test_tokens_are_the_same_whatever_the_order_of_the_fields() -> None:
    one = tokens({"b": "second words", "a": "first words"}, "Hi there", "x@mail.example")
    two = tokens({"a": "first words", "b": "second words"}, "Hi there", "x@mail.example")
    assert one == two
    assert "field:a" in one
    assert "subject:there" in one
    assert "from:mail.example" in one


def test_tokens_read_link_hosts_and_the_shape_of_the_data() -> None:
    found = tokens({"message": "see https://www.shop.example.com/x and more"})
    assert {"host:www.shop.example.com", "host:example.com", "tld:com"} <= set(found)
    assert "shape:links:1" in found
    assert "shape:fields:1" in found


def test_tokens_are_bounded_whatever_the_submission_holds() -> None:
    huge: FieldData = {f"f{i}": " ".join(f"w{i}x{j}" for j in range(2000)) for i in range(50)}
    assert len(tokens(huge)) <= MAX_TOKENS + 20 + 30  # words, plus field names and shape


def test_long_runs_become_a_token_of_their_start_and_size() -> None:
    assert "long:a6" in tokens({"m": "a" * 40})


def test_hashes_are_keyed_and_stable() -> None:
    one, again, other = TokenHasher(KEY), TokenHasher(KEY), TokenHasher(b"o" * 32)
    assert one.hash("viagra") == again.hash("viagra")
    assert one.hash("viagra") != other.hash("viagra")
    assert one.hashes(["b", "a", "b"]) == tuple(sorted({one.hash("a"), one.hash("b")}))


def test_nothing_known_says_nothing() -> None:
    assert judge([1, 2, 3], {}, 0, 0).evidence == 0.0
    assert judge([1, 2, 3], {1: pack(3, 0)}, 3, 0).evidence == 0.0  # one kind only


def test_chi2_tail_is_a_log_probability_that_falls_with_the_statistic() -> None:
    both = [log_chi2_tails(x, 20) for x in (0.0, 10.0, 40.0, 400.0, 4000.0)]
    tails = [upper for upper, _ in both]
    assert tails[0] == 0.0
    # The two tails are one probability's two sides.
    for upper, lower in both[1:]:
        assert math.exp(upper) + math.exp(lower) == pytest.approx(1.0, abs=1e-6)
    assert all(a > b for a, b in itertools.pairwise(tails))


def test_an_untaught_workspace_is_scored_by_the_heuristics_alone() -> None:
    got = spam_score(SPAM, "Win", None, hasher=TokenHasher(KEY), evidence=Evidence(), threshold=5.0)
    assert got == score(SPAM, "Win")


def test_taught_statistics_tell_spam_from_ham() -> None:
    hasher = TokenHasher(KEY)
    lessons = [(_variant(SPAM, i), Label.SPAM) for i in range(12)]
    lessons += [(_variant(HAM, i), Label.HAM) for i in range(12)]
    own = _taught(hasher, lessons)
    evidence = Evidence(own=own, instance=own)
    spam = spam_score(SPAM, None, None, hasher=hasher, evidence=evidence, threshold=5.0)
    ham = spam_score(HAM, None, None, hasher=hasher, evidence=evidence, threshold=5.0)
    assert spam.is_spam(5.0)
    assert not ham.is_spam(5.0)
    assert any(r.startswith("filter:+") for r in spam.reasons)
    clues = [r.rsplit("=", 1) for r in spam.reasons if "=" in r]
    assert clues
    assert all(float(f) > 0.9 for _, f in clues)
    assert {word for word, _ in clues} <= set(tokens(SPAM, findings=score(SPAM).reasons))


def test_another_workspace_cannot_on_its_own_make_mail_spam() -> None:
    hasher = TokenHasher(KEY)
    # Another workspace taught the visitor's plain words as spam, many times over.
    plain: FieldData = {"message": "Hello, I would like a quote for the kitchen"}
    others = _taught(
        hasher,
        [(_variant(plain, i), Label.SPAM) for i in range(500)]
        + [(_variant(HAM, i), Label.HAM) for i in range(500)],
    )
    for threshold in (1.0, 5.0, 9.0):
        got = spam_score(
            plain,
            None,
            None,
            hasher=hasher,
            evidence=Evidence(instance=others),
            threshold=threshold,
        )
        assert got.points <= score(plain).points + INSTANCE_SHARE * threshold
        assert not got.is_spam(threshold)


def test_a_workspaces_own_evidence_wins_over_the_instance() -> None:
    hasher = TokenHasher(KEY)
    plain: FieldData = {"message": "Hello, I would like a quote for the kitchen"}
    others = _taught(hasher, [(_variant(plain, i), Label.SPAM) for i in range(50)])
    own = _taught(
        hasher,
        [(_variant(plain, i), Label.HAM) for i in range(12)]
        + [(_variant(SPAM, i), Label.SPAM) for i in range(12)],
    )
    instance = _instance_of(own, others)
    got = spam_score(
        plain, None, None, hasher=hasher, evidence=Evidence(own, instance), threshold=5.0
    )
    assert not got.is_spam(5.0)


def test_clues_at_odds_say_little_and_agreeing_clues_say_much() -> None:
    agreeing_spam = fisher_evidence(20 * math.log(0.99), 20 * math.log(0.01), 20)
    agreeing_ham = fisher_evidence(20 * math.log(0.01), 20 * math.log(0.99), 20)
    at_odds = fisher_evidence(
        10 * math.log(0.99) + 10 * math.log(0.01), 10 * math.log(0.01) + 10 * math.log(0.99), 20
    )
    assert agreeing_spam > 10
    assert agreeing_ham < -10
    assert abs(at_odds) < 1


def test_the_instance_layer_shows_no_word_of_what_other_workspaces_taught() -> None:
    # A clue's f read from the other workspaces' counts would let an owner test, word by
    # word through their own form (a sender's address, a name), what the other
    # workspaces' mail holds: the reasons say the instance's evidence, and no clue.
    hasher = TokenHasher(KEY)
    known = "ann@example.com"
    others = _taught(
        hasher,
        [({**_variant(HAM, i), "email": known}, Label.HAM) for i in range(20)]
        + [(_variant(SPAM, i), Label.SPAM) for i in range(20)],
    )
    probe: FieldData = {"message": "Hello", "email": known}

    got = spam_score(
        probe, None, known, hasher=hasher, evidence=Evidence(instance=others), threshold=5.0
    )

    assert [reason for reason in got.reasons if reason.startswith("instance:")]
    assert not [reason for reason in got.reasons if "=" in reason]


def test_a_young_workspace_s_clues_are_those_its_own_statistics_give() -> None:
    # Under CONFIDENT_AFTER messages of each kind the instance's layer speaks too, and
    # the tokens are listed for it: the workspace's own clues are then judged from that
    # list, and must be what judging the text gives.
    hasher = TokenHasher(KEY)
    own = _taught(
        hasher,
        [(_variant(SPAM, i), Label.SPAM) for i in range(4)]
        + [(_variant(HAM, i), Label.HAM) for i in range(4)],
    )
    others = _taught(
        hasher,
        [(_variant(SPAM, i), Label.SPAM) for i in range(20)]
        + [(_variant(HAM, i), Label.HAM) for i in range(20)],
    )
    instance = _instance_of(own, others)
    reasons = score(SPAM).reasons
    fresh = Statistics(own.spam_messages, own.ham_messages, own.tokens)
    alone = judge_text(token_parts(SPAM, None, None, reasons), hasher, fresh)

    got = spam_score(SPAM, None, None, hasher=hasher, evidence=Evidence(own, instance), threshold=5)

    assert [r for r in got.reasons if r.startswith("instance:")]
    assert [r for r in got.reasons if r.startswith("filter:")] == [f"filter:{alone.evidence:+.1f}"]
    shown = [r for r in got.reasons if "=" in r]
    assert shown
    assert shown == [f"{token[:60]}={f:.2f}" for token, f in alone.clues][: len(shown)]


@pytest.mark.parametrize("words", [20, MAX_CLUES + 40])
def test_the_word_memo_judges_as_the_hashes_do(words: int) -> None:
    # judge_words remembers each word's f beside the statistics: cold, warm, or past its
    # cap, it must say what judge() says of the same words' hashes, clues and all (past
    # MAX_CLUES, the strongest are kept).
    hasher = TokenHasher(KEY)
    message = [f"w{n}" for n in range(words)] + ["unknown", "even"]
    counts = {hasher.hash(w): pack(n % 7, (n * 3) % 5) for n, w in enumerate(message[:-2])}
    counts[hasher.hash("even")] = pack(4, 4)
    statistics = Statistics(30, 40, counts)
    expected = judge([hasher.hash(w) for w in message], counts, 30, 40)

    cold = judge_words(message, hasher, statistics)
    warm = judge_words(message, hasher, statistics)
    for n in range(WORD_MEMO):  # full
        statistics.word_memo[f"other{n}"] = 0.5
    backwards = list(reversed(message))
    full = judge_words(backwards, hasher, statistics)

    assert expected.clues
    assert cold == warm == expected
    assert len(statistics.word_memo) == WORD_MEMO + len(message)
    assert full.evidence == pytest.approx(expected.evidence)
    assert {backwards[i] for i, _ in full.clues} <= set(message[:-2])
