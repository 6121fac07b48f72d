"""`make bench-spam`'s intake side (bench/spam/intake_run.py) on a handful of made-up
mails: each goes through the pipeline, is taught through the owner-side service, and in
the errors mode the untouched ones are settled by the rule on the simulated clock."""

from __future__ import annotations

import anyio
from bench.spam.corpus import Mail
from bench.spam.intake_run import IntakeRun, run
from bench.spam.modes import Mode
from bench.spam.timing import LEARNED_TOKENS, with_learned_tokens

from intake.domain.model import FieldData
from intake.domain.spam.hashing import TokenHasher
from intake.domain.spam.model import Evidence, Statistics, pack
from intake.domain.spam.verdict import spam_score

SPAM = "Cheap pills online, best casino bonus, click here to win money now"
HAM = "Hello, could we meet on Tuesday to talk about the garden project?"


def mails(count: int) -> list[Mail]:
    return [
        Mail(
            name=f"made-up/{i}",
            spam=i % 2 == 0,
            subject=f"offer {i}" if i % 2 == 0 else f"meeting {i}",
            message=f"{SPAM if i % 2 == 0 else HAM} ({i})",
            email=f"sender{i}@example.com",
        )
        for i in range(count)
    ]


def run_mode(mode: Mode, count: int, per_day: int) -> IntakeRun:
    done: list[int] = []

    async def go() -> IntakeRun:
        return await run(mails(count), mode, per_day=per_day, progress=done.append)

    result = anyio.run(go)
    assert done == list(range(1, count + 1))
    return result


def test_every_label_taught_reaches_the_statistics_the_scoring_is_timed_on() -> None:
    result = run_mode(Mode.FULL, 24, per_day=200)
    assert [r.spam for r in result.results] == [m.spam for m in mails(24)]
    assert result.threshold == 5.0
    assert result.timed is not None
    trained = result.timed.evidence.own
    assert (trained.spam_messages, trained.ham_messages) == (12, 12)
    assert len(result.timed.cpu_us) == len(result.timed.wall_us) == 24
    # The corpus's few tokens, filled up to the target's workspace.
    assert 0 < result.timed.taught_tokens < LEARNED_TOKENS == len(trained.tokens)
    # Taught both kinds, the filter takes over: the last spam is flagged, the last ham not.
    assert result.results[-2].flagged
    assert not result.results[-1].flagged


def test_with_mistakes_corrected_the_rule_settles_what_nobody_touched() -> None:
    # One submission a simulated day for 20 days: those older than the rule's 14 days
    # that no triage taught are settled.
    result = run_mode(Mode.ERRORS, 20, per_day=1)
    assert result.timed is None
    assert result.settled > 0
    wrong = sum(r.flagged != r.spam for r in result.results)
    assert result.corrections == wrong


def test_tokens_added_to_reach_the_target_s_workspace_change_no_score() -> None:
    hasher = TokenHasher(b"k" * 32)
    spam = {hasher.hash(word): pack(9, 1) for word in SPAM.lower().split()}
    ham = {hasher.hash(word): pack(1, 9) for word in HAM.lower().split()}
    own = Statistics(10, 10, {**spam, **ham})
    instance = Statistics(12, 10, {**own.tokens, hasher.hash("garden"): pack(3, 9)})
    taught = Evidence(own=own, instance=instance)
    filled = with_learned_tokens(taught, 5_000)
    assert len(filled.own.tokens) == 5_000
    assert filled.own.tokens.items() >= own.tokens.items()
    assert filled.instance.tokens.items() >= instance.tokens.items()
    added = filled.own.tokens.keys() - own.tokens.keys()
    assert {filled.instance.tokens[token] for token in added} <= {pack(1, 0), pack(0, 1)}
    assert (filled.own.spam_messages, filled.instance.spam_messages) == (10, 12)
    assert with_learned_tokens(filled, 5_000) is filled  # full already
    for text in (SPAM, HAM, "a new text altogether"):
        data: FieldData = {"message": text}
        before = spam_score(data, "hi", None, hasher=hasher, evidence=taught, threshold=5.0)
        after = spam_score(data, "hi", None, hasher=hasher, evidence=filled, threshold=5.0)
        assert after == before
