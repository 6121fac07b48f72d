"""A filled honeypot, served on every store: its write is a count of the day for the
form's owner, and never a submission, an outbox row or a quota count."""

from __future__ import annotations

import pytest

from tests.http.conftest import Seeded

# Also on PostgreSQL (tests/http/conftest.py): the day's honeypot count, an upsert.
pytestmark = pytest.mark.postgres_smoke

FIELDS = {"name": "Ada", "email": "ada@example.com", "message": "Hello"}


def test_each_filled_honeypot_is_counted_for_its_form_and_day(seeded: Seeded) -> None:
    svc, form = seeded.svc, seeded.form
    used = svc.used(seeded.workspace.workspace_id)

    for n in range(3):
        response = svc.public(form.public_form_key, data={**FIELDS, "_gotcha": f"bot {n}"})
        assert response.status_code == 201, response.text
    replay = svc.public(form.public_form_key, data={**FIELDS, "_gotcha": "bot 2"})

    assert replay.status_code == 201
    day = svc.clock.now().date().isoformat()
    assert svc.run(svc.store.submissions.honeypot_hits, form.form_id) == {day: 4}
    assert svc.stored() == (0, 0)
    assert svc.used(seeded.workspace.workspace_id) == used


def test_a_honeypot_retried_with_its_key_is_counted_once(seeded: Seeded) -> None:
    svc, form = seeded.svc, seeded.form
    bot = {**FIELDS, "_gotcha": "x"}

    first = svc.public(form.public_form_key, data=bot, idempotency_key="h-1")
    retry = svc.public(form.public_form_key, data=bot, idempotency_key="h-1")

    assert (first.status_code, retry.status_code) == (201, 200)
    day = svc.clock.now().date().isoformat()
    assert svc.run(svc.store.submissions.honeypot_hits, form.form_id) == {day: 1}
    assert svc.stored() == (0, 0)


def test_a_honeypot_to_a_form_disabled_since_it_was_looked_up_is_refused_like_a_real_one(
    seeded: Seeded,
) -> None:
    """PostgreSQL may answer the lookup from its cache: the write confirms the form, as a
    commit does, so the bot meets the answer a real submission would."""
    svc, form = seeded.svc, seeded.form

    svc.update_form(form.form_id, enabled=False)
    bot = svc.public(form.public_form_key, data={**FIELDS, "_gotcha": "x"})
    real = svc.public(form.public_form_key, data=FIELDS)

    assert bot.status_code == real.status_code == 403
    assert bot.json()["error"]["code"] == real.json()["error"]["code"] == "form_disabled"
