"""The spam threshold's boundary, through the public endpoint: a submission scoring
exactly the form's threshold is kept as spam, one scoring just under it is accepted
(docs/scoring.md)."""

from __future__ import annotations

import math

import pytest

from intake.domain.model import FieldData, SubmissionStatus
from intake.domain.scoring import PHRASE_POINTS, score
from tests.http.conftest import Seeded

# One known phrase and nothing else the heuristics count.
MESSAGE: FieldData = {"name": "Ada", "message": "Please click here to see our menu."}


def test_the_message_scores_one_phrase_exactly() -> None:
    assert score(MESSAGE).points == PHRASE_POINTS


@pytest.mark.parametrize(
    ("threshold", "status"),
    [
        pytest.param(PHRASE_POINTS, SubmissionStatus.SPAM, id="at the threshold: spam"),
        pytest.param(
            math.nextafter(PHRASE_POINTS, math.inf),
            SubmissionStatus.ACCEPTED,
            id="just under the threshold: accepted",
        ),
        pytest.param(
            math.nextafter(PHRASE_POINTS, 0),
            SubmissionStatus.SPAM,
            id="just over the threshold: spam",
        ),
    ],
)
def test_a_score_at_or_over_the_forms_threshold_is_spam(
    seeded: Seeded, threshold: float, status: SubmissionStatus
) -> None:
    seeded.svc.update_form(seeded.form.form_id, spam_threshold=threshold)

    response = seeded.svc.public(seeded.form.public_form_key, data=MESSAGE)

    assert response.status_code == 201, response.text
    stored = seeded.svc.submission(response.json()["submission_id"])
    assert stored.status is status
