"""A submission's spam reasons: kept with it by the pipeline, shown to the owner beside
the score (GET /v1/submissions/{id}, the listing), never to the sender, whatever the
shape of the answer (JSON, a replay, a browser's redirect, the thank-you page)."""

from __future__ import annotations

from typing import Any

import httpx2

from intake.domain.model import FieldData, Scope, SubmissionStatus
from intake.domain.scoring import score
from intake.service.admin import CreatedKey
from tests.http.conftest import (
    BROWSER_ACCEPT,
    Seeded,
)

SPAM: FieldData = {
    "name": "Ada",
    "message": "Buy viagra now! Click here: http://a.example http://b.example http://c.example",
}
SUBJECT = "Casino bonus"
REASONS = list(score(SPAM, SUBJECT).reasons)
POINTS = score(SPAM, SUBJECT).points


def test_the_message_scores_as_spam_for_several_reasons() -> None:
    assert POINTS >= 5.0  # the default threshold
    assert len(REASONS) >= 2
    assert all(":" in reason for reason in REASONS[:2])


def _reader(seeded: Seeded) -> CreatedKey:
    created: CreatedKey = seeded.svc.run(
        seeded.svc.services.keys.create,
        seeded.workspace.workspace_id,
        scopes=frozenset({Scope.READ}),
    )
    return created


def _get(seeded: Seeded, path: str) -> Any:
    headers = {"authorization": f"Bearer {_reader(seeded).secret}"}
    answer = seeded.svc.client.get(path, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


def _submit(seeded: Seeded) -> str:
    answer = seeded.svc.public(seeded.form.public_form_key, data={**SPAM, "_subject": SUBJECT})
    assert answer.status_code == 201, answer.text
    submission_id: str = answer.json()["submission_id"]
    return submission_id


def test_the_owner_reads_the_reasons_beside_the_score(seeded: Seeded) -> None:
    submission_id = _submit(seeded)

    one = _get(seeded, f"/v1/submissions/{submission_id}")
    listed = _get(seeded, f"/v1/forms/{seeded.form.form_id}/submissions")

    assert one["spam_score"] == POINTS
    assert one["spam_reasons"] == REASONS
    assert [item["spam_reasons"] for item in listed["data"]] == [REASONS]
    stored = seeded.svc.submission(submission_id)
    assert stored.status is SubmissionStatus.SPAM
    assert stored.spam_reasons == tuple(REASONS)


def test_a_submission_that_scores_nothing_has_no_reasons(seeded: Seeded) -> None:
    answer = seeded.svc.public(seeded.form.public_form_key, data={"message": "Hello"})
    assert answer.status_code == 201, answer.text

    one = _get(seeded, f"/v1/submissions/{answer.json()['submission_id']}")

    assert (one["spam_score"], one["spam_reasons"]) == (0.0, [])


def _disclosed(answer: httpx2.Response) -> list[str]:
    """What of the score and its reasons the answer holds, in its body or its headers."""
    said = answer.text + "\n" + "\n".join(f"{k}: {v}" for k, v in answer.headers.items())
    marks = [*REASONS, repr(POINTS), "spam", "score", "reason"]
    return [mark for mark in marks if mark in said.lower()]


def test_the_senders_answers_hold_neither_the_score_nor_the_reasons(seeded: Seeded) -> None:
    svc, key = seeded.svc, seeded.form.public_form_key
    data = {**SPAM, "_subject": SUBJECT}
    browser = {"accept": BROWSER_ACCEPT}

    def public(peer: str, **kwargs: Any) -> httpx2.Response:
        # A network each, below the public route's rate limit; a replay from its own.
        return svc.public(key, data=data, peer=f"198.51.{peer}.7", **kwargs)

    answers = {
        "json": public("1"),
        "server json": svc.server(seeded.form.form_id, seeded.key.secret, json=data),
        "first with a key": public("2", idempotency_key="k-1"),
        "replay": public("2", idempotency_key="k-1"),
        "browser": public("3", headers=browser),
        "browser with a key": public("4", headers=browser, idempotency_key="k-2"),
        "browser replay": public("4", headers=browser, idempotency_key="k-2"),
    }
    thanks = answers["browser"].headers["location"]
    answers["thank-you page"] = svc.client.get(thanks, headers=browser)
    svc.update_form(seeded.form.form_id, redirect_url="https://shop.example/thanks")
    answers["browser to the form's page"] = public("5", headers=browser)

    assert {name: a.status_code for name, a in answers.items()} == {
        "json": 201,
        "server json": 201,
        "first with a key": 201,
        "replay": 200,
        "browser": 303,
        "browser with a key": 303,
        "browser replay": 303,
        "thank-you page": 200,
        "browser to the form's page": 303,
    }
    assert answers["replay"].headers["idempotent-replayed"] == "true"
    assert answers["browser replay"].headers["idempotent-replayed"] == "true"
    assert {name: _disclosed(a) for name, a in answers.items()} == {name: [] for name in answers}
    # Each was kept as spam, with its reasons: the answers had them to give away.
    kept = svc.submissions(seeded.form.form_id)
    assert len(kept) == 6
    assert {(s.status, s.spam_reasons) for s in kept} == {(SubmissionStatus.SPAM, tuple(REASONS))}
