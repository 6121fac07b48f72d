"""The bot-challenge provider answering too slowly, then not at all, in the middle of a
load on a form that requires a Turnstile challenge.

Submissions made while the provider worked are stored as `accepted`. Once it is slower
than INTAKE_CHALLENGE_TIMEOUT, and after it is gone, every submission is still
acknowledged and stored, as `unverified`: none is lost, none is waved through as
`accepted`, and none uses the monthly quota.
"""

from __future__ import annotations

import pytest

from intake.domain.model import ChallengeProvider
from tests.faults.harness import (
    FAULT_TIMEOUT,
    Entry,
    Lab,
    created,
    created_after,
    lost_acknowledgements,
    now,
    report,
)
from tests.support.fake_provider import PASS_SECRET, FakeProvider

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.timeout(FAULT_TIMEOUT)]

CHALLENGE_TIMEOUT = 0.5  # seconds intake waits for the provider
SLOW = 2.0  # seconds the slow provider takes: well past the timeout
TOKEN = "load-test-token"  # any token passes with the fake's PASS_SECRET


def test_a_challenge_provider_outage_keeps_every_submission_as_unverified(lab: Lab) -> None:
    with FakeProvider() as provider:
        service = lab.serve(
            INTAKE_TURNSTILE_VERIFY_URL=provider.url(ChallengeProvider.TURNSTILE),
            INTAKE_CHALLENGE_TIMEOUT=str(CHALLENGE_TIMEOUT),
        )
        form = lab.new_form(
            "--challenge", "turnstile", "--challenge-secret", PASS_SECRET, api_key=False
        )
        lab.never_logged += [PASS_SECRET, TOKEN]
        load = lab.load(
            "load", service, form,
            "--concurrency", "8", "--duration", "150", "--challenge-token", TOKEN,
        )  # fmt: skip
        load.wait_for(created, 100, 60, "201s while the provider works", lab.describe)

        slow_at = now()
        provider.delay = SLOW
        load.wait_for(created_after(slow_at), 60, 60, "201s from a slow provider", lab.describe)
        down_at = now()
    # Out of the block: the provider is shut down, its port refuses connections.
    load.wait_for(created_after(down_at), 60, 60, "201s with no provider", lab.describe)
    load.stop()

    entries = load.entries()
    stored = lab.store().submissions(form.form_id)
    lost = lost_acknowledgements(entries, stored)
    partial = lab.store().partial_commits()
    # Answered before the provider slowed down: it judged them. Started after: it could
    # not have. In between, either.
    working = [e for e in entries if e["started"] + e["elapsed"] < slow_at]
    failing = [e for e in entries if e["started"] >= slow_at]
    slow = [e for e in failing if e["started"] < down_at]
    gone = [e for e in failing if e["started"] >= down_at]

    def statuses(group: list[Entry]) -> set[str]:
        return {stored[e["submission_id"]].status for e in group if created(e)}

    report(
        "challenge-outage",
        sent=len(entries),
        acknowledged=sum(1 for e in entries if created(e)),
        stored=sum(1 for e in entries if created(e) and e["submission_id"] in stored),
        lost=len(lost),
        accepted=sum(1 for s in stored.values() if s.status == "accepted"),
        unverified=sum(1 for s in stored.values() if s.status == "unverified"),
        while_slow=len(slow),
        while_gone=len(gone),
    )
    assert lost == [], lost[:10]
    assert partial == {}, partial  # includes: the quota counts the accepted ones only
    assert lab.leaks() == []
    assert {e["status"] for e in entries} == {201}, lab.describe()
    assert statuses(working) == {"accepted"}
    assert statuses(slow) == {"unverified"}
    assert statuses(gone) == {"unverified"}
    assert len(slow) >= 60
    assert len(gone) >= 60
