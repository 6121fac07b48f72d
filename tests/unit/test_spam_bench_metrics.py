"""`make bench-spam`'s figures (bench/spam/metrics.py) on inputs small enough to count by
hand: ROC points with ties taken conservatively, (1-ROCA)% with a tie counting half."""

from __future__ import annotations

import pytest
from bench.spam.metrics import (
    Scored,
    caught_at,
    figures_of,
    one_minus_roca_percent,
    percentile,
    second_half,
    verdicts,
)


def spam(score: float, *, flagged: bool = False) -> Scored:
    return Scored(spam=True, score=score, flagged=flagged)


def ham(score: float, *, flagged: bool = False) -> Scored:
    return Scored(spam=False, score=score, flagged=flagged)


def hams(*scores: float) -> list[Scored]:
    return [ham(score) for score in scores]


# 1,000 ham: 0.1% allows one of them flagged, 0.5% five, 1% ten.
THOUSAND_HAM = hams(*[float(i) / 1000 for i in range(1000)])


def test_a_perfect_separation_catches_every_spam_with_no_ham_flagged() -> None:
    results = [spam(5.0), spam(6.0), *hams(1.0, 2.0)]
    assert caught_at(results, 0.0) == 1.0
    assert one_minus_roca_percent(results) == 0.0


def test_the_cut_goes_just_above_the_first_ham_it_may_not_flag() -> None:
    # Ham scores 0.000 .. 0.999: at 0.1% the highest ham (0.999) may be flagged, the
    # next (0.998) not, so a spam must score above 0.998 to be caught.
    results = [spam(0.9985), spam(0.998), spam(0.5), *THOUSAND_HAM]
    assert caught_at(results, 0.001) == pytest.approx(1 / 3)
    # At 1%, ten ham may be flagged: the bar is above 0.989, and 0.5 is still under it.
    assert caught_at(results, 0.01) == pytest.approx(2 / 3)


def test_a_spam_tied_with_a_ham_that_may_not_be_flagged_is_not_caught() -> None:
    # Two ham at 0.9 and none may be flagged (2 ham, 0.1%): the spam at 0.9 is missed.
    assert caught_at([spam(0.9), spam(1.0), *hams(0.9, 0.1)], 0.001) == 0.5


def test_a_group_of_tied_ham_cannot_be_split_to_fit_the_allowance() -> None:
    # 1% of 1,000 allows ten ham flagged; eleven tie at the top, so none of them may be,
    # and a spam tied with them is missed.
    results = [spam(2.0), spam(1.0), *hams(*[2.0] * 11), *hams(*[0.0] * 989)]
    assert caught_at(results, 0.01) == 0.0


def test_the_allowance_is_rounded_down_from_the_share() -> None:
    # 0.5% of 1,000 is five ham: the sixth highest (0.994) is the bar.
    results = [spam(0.9945), spam(0.994), *THOUSAND_HAM]
    assert caught_at(results, 0.005) == 0.5


def test_one_minus_roca_counts_wrongly_ordered_pairs_and_ties_half() -> None:
    # Pairs (spam, ham): (3,1) right, (3,3) tie, (2,1) right, (2,3) wrong: 1.5 of 4 lost.
    results = [spam(3.0), spam(2.0), *hams(1.0, 3.0)]
    assert one_minus_roca_percent(results) == pytest.approx(37.5)


def test_a_filter_that_knows_nothing_has_half_the_area_above_its_curve() -> None:
    assert one_minus_roca_percent([spam(0.5), spam(0.5), *hams(0.5, 0.5, 0.5)]) == 50.0


def test_verdicts_are_the_shares_flagged_of_each_side() -> None:
    results = [
        spam(0, flagged=True),
        spam(0, flagged=False),
        *[ham(0, flagged=i == 0) for i in range(4)],
    ]
    assert verdicts(results).spam_caught == 0.5
    assert verdicts(results).ham_flagged == 0.25


def test_the_figures_need_both_sides() -> None:
    with pytest.raises(ValueError, match="both"):
        caught_at([spam(1.0)], 0.01)
    with pytest.raises(ValueError, match="both"):
        one_minus_roca_percent(hams(1.0))


def test_the_figures_are_taken_over_the_second_half() -> None:
    # The first half (misjudged) is where the filter learns; only the second counts.
    first = [spam(0.0), ham(1.0, flagged=True)]
    second = [spam(1.0, flagged=True), ham(0.0)]
    assert second_half([*first, *second]) == second
    figures = figures_of([*first, *second])
    assert (figures.spam, figures.ham) == (1, 1)
    assert figures.caught_at == (1.0, 1.0, 1.0)
    assert figures.one_minus_roca == 0.0
    assert (figures.cutoff.spam_caught, figures.cutoff.ham_flagged) == (1.0, 0.0)


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]  # 1 .. 10
    assert percentile(values, 0.5) == 5.0
    assert percentile(values, 0.9) == 9.0
    assert percentile([7.0], 0.5) == 7.0
