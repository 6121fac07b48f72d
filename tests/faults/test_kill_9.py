"""`intake serve` killed with SIGKILL in the middle of a load, then started again.

Every submission acknowledged with a 201 before the kill is in the store with its
outbox row: a 201 is only sent after the commit. A retry of an acknowledged request
(the same Idempotency-Key and payload) is answered with its original submission_id,
200 and `Idempotent-Replayed: true`. A request that got no answer may or may not have
been committed; its retry tells which, and either way it is stored exactly once.
"""

from __future__ import annotations

import pytest

from tests.faults.harness import (
    FAULT_TIMEOUT,
    Lab,
    answered,
    created,
    created_after,
    lost_acknowledgements,
    now,
    replay_problems,
    report,
)

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.timeout(FAULT_TIMEOUT)]


def test_acknowledged_submissions_survive_kill_9(lab: Lab) -> None:
    service = lab.serve()
    form = lab.new_form()
    load = lab.load("load", service, form, "--concurrency", "8", "--duration", "150")
    load.wait_for(created, 150, 60, "201s before the kill", lab.describe)

    killed_at = now()
    service.kill()
    # Requests keep coming while it is down: refused connections, recorded as such.
    load.wait_for(
        lambda e: not answered(e) and e["started"] >= killed_at, 8, 30,
        "requests with no answer", lab.describe,
    )  # fmt: skip
    service.start()
    back_at = now()
    load.wait_for(created_after(back_at), 100, 60, "201s after the restart", lab.describe)
    load.stop()

    entries = load.entries()
    store = lab.store()
    stored = store.submissions(form.form_id)
    lost = lost_acknowledgements(entries, stored)
    partial = store.partial_commits()
    acknowledged = [e for e in entries if created(e)]
    unanswered = [e for e in entries if not answered(e)]
    in_flight = [e for e in unanswered if e["sent"]]  # cut off mid-request by the kill
    held = store.keys(form.form_id)

    # Every acknowledged request and every one that got no answer, sent again.
    retry = lab.replay("retry", service, form, acknowledged + unanswered)
    retry.finish()
    retries = retry.entries()
    problems = replay_problems({e["key"]: e for e in entries}, retries, held)
    after = store.submissions(form.form_id)

    report(
        "kill-9",
        sent=len(entries),
        acknowledged=len(acknowledged),
        stored=len(acknowledged) - len(lost),
        lost=len(lost),
        no_answer=len(unanswered),
        cut_off_in_flight=len(in_flight),
        committed_without_answer=sum(1 for e in unanswered if e["key"] in held),
        retried=len(retries),
    )
    assert lost == [], lost[:10]
    assert partial == {}, partial
    assert lab.leaks() == []
    # Nothing but successes and missing answers: no error came out of the kill.
    assert {e["status"] for e in entries} <= {201, None}, {e["status"] for e in entries}
    assert len(retries) == len(acknowledged) + len(unanswered)
    assert problems == [], problems[:10]
    # After the retries every request sent is stored, exactly once.
    assert len(after) == len({e["key"] for e in entries})
    assert store.partial_commits() == {}
