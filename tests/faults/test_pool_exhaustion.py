"""Every connection of the pool held busy: an open transaction holds an ACCESS EXCLUSIVE
lock on the submissions table, so each commit blocks on it with its connection.

With the pool full, requests are not queued without end: each waits at most
INTAKE_DATABASE_POOL_TIMEOUT for a connection and is answered 503 with Retry-After, so
the requests pending at the server stay bounded whatever the arrival rate. Once the lock
is released the commits that waited go through and 201s resume; nothing is lost.

The load is an open loop (a fixed rate of new requests whatever the answers), so a
server that let requests pile up would show it in the requests in flight.
"""

from __future__ import annotations

import time

import psycopg
import pytest

from tests.faults.harness import (
    FAULT_TIMEOUT,
    Entry,
    Lab,
    created,
    created_after,
    lost_acknowledgements,
    now,
    p99,
    report,
)

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.timeout(FAULT_TIMEOUT)]

POOL_SIZE = 2
POOL_TIMEOUT = 0.5  # seconds
RATE = 40.0  # new requests a second
LOCK_SECONDS = 5.0
# At most: a pool timeout plus a second of slack for a busy machine.
LATENCY_BOUND = POOL_TIMEOUT + 1.0
# The requests in flight a fast refusal allows: what arrives within the latency bound,
# plus the commits blocked on the lock (one per connection). Queueing without end would
# reach RATE * LOCK_SECONDS (200) by the end of the lock.
INFLIGHT_BOUND = int(RATE * LATENCY_BOUND) + POOL_SIZE


def _proper_503(entry: Entry) -> bool:
    retry_after = entry["retry_after"] or ""
    return bool(
        entry["envelope"]
        and entry["error_code"] == "service_unavailable"
        and retry_after.isdigit()
        and int(retry_after) >= 1
    )


def test_an_exhausted_pool_answers_fast_503s_and_recovers(lab: Lab) -> None:
    service = lab.serve(
        INTAKE_DATABASE_POOL_SIZE=str(POOL_SIZE),
        INTAKE_DATABASE_POOL_TIMEOUT=str(POOL_TIMEOUT),
    )
    form = lab.new_form()
    load = lab.load("load", service, form, "--rate", str(RATE), "--duration", "150")
    load.wait_for(created, 60, 60, "201s before the fault", lab.describe)

    with psycopg.connect(lab.database_url, connect_timeout=10) as locker:
        locker.execute("LOCK TABLE submissions IN ACCESS EXCLUSIVE MODE")
        locked_at = now()
        load.wait_for(
            lambda e: e["status"] == 503 and e["started"] >= locked_at, 40, 60,
            "503s while the pool is held", lab.describe,
        )  # fmt: skip
        time.sleep(max(0.0, locked_at + LOCK_SECONDS - now()))  # the lock's time is the fault
        released_at = now()
    # Leaving the block commits the transaction, and the lock goes with it.
    load.wait_for(created_after(released_at), 60, 60, "201s after the release", lab.describe)
    summary = load.stop()

    entries = load.entries()
    refused = [e for e in entries if e["status"] == 503]
    # The requests in flight at the client, sampled every 100 ms, while the lock held.
    inflight = [n for at, n in summary["inflight"] if locked_at <= at <= released_at]
    stored = lab.store().submissions(form.form_id)
    lost = lost_acknowledgements(entries, stored)
    partial = lab.store().partial_commits()
    report(
        "pool-exhaustion",
        sent=len(entries),
        acknowledged=sum(1 for e in entries if created(e)),
        stored=sum(1 for e in entries if created(e) and e["submission_id"] in stored),
        lost=len(lost),
        **{"503s": len(refused)},
        p99_503_s=round(p99([e["elapsed"] for e in refused]), 3),
        max_inflight=max(inflight, default=0),
        inflight_bound=INFLIGHT_BOUND,
        skipped=summary["skipped"],
    )
    assert lost == [], lost[:10]
    assert partial == {}, partial
    assert lab.leaks() == []
    assert {e["status"] for e in entries} == {201, 503}, lab.describe()
    assert [e for e in refused if not _proper_503(e)] == []
    assert p99([e["elapsed"] for e in refused]) < LATENCY_BOUND
    assert max(inflight) <= INFLIGHT_BOUND, inflight
    assert summary["skipped"] == 0
