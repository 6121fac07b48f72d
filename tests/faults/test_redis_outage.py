"""Redis killed in the middle of a load, then started again (empty, as a crashed cache
comes back).

While it is down every worker limits from its own in-process windows, so submissions go
on being accepted; once it is back the workers share their windows in Redis again,
without a restart: a burst from one client address is refused with 429 rate_limited
after the burst limit, and Redis holds that address's window.
"""

from __future__ import annotations

import pytest

from tests.faults.harness import (
    FAULT_TIMEOUT,
    Form,
    Lab,
    created,
    created_after,
    lost_acknowledgements,
    now,
    report,
)
from tests.support.processes import wait_for

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.timeout(FAULT_TIMEOUT)]

WORKERS = 2
BURST_LIMIT = 5  # the shipped public burst: 5 per 30 s per client address and form
BURST_WINDOW = 30
BURST_SENT = 12
ONE_CLIENT = "203.0.113.77"
# What the workers log when they lose Redis and when they have it back (once each per
# outage and worker).
LOST = "Redis unreachable"
BACK = "Redis reachable again"


def _burst_key(form: Form) -> str:
    # intake.domain.ratelimit.public_windows, under the Redis limiter's prefix.
    return f"intake:rl:pub:b:{{{form.form_id}}}:{ONE_CLIENT}"


def test_submissions_go_on_while_redis_is_down_and_shared_limits_return_with_it(
    lab: Lab,
) -> None:
    service = lab.serve(workers=WORKERS)
    pid = service.pid
    form = lab.new_form()
    load = lab.load("load", service, form, "--concurrency", "8", "--duration", "150")
    load.wait_for(created, 100, 60, "201s before the fault", lab.describe)
    with lab.redis.client() as client:
        assert client.dbsize() > 0, "the windows are not in Redis to begin with"

    killed_at = now()
    lab.redis.kill()
    load.wait_for(created_after(killed_at), 150, 60, "201s while Redis is down", lab.describe)
    wait_for(lambda: LOST in service.log_text(), 30, "the fallback's warning", lab.describe)
    lab.redis.start()
    back_at = now()
    # Each worker that lost Redis says when it has it back: then the limits are shared.
    wait_for(
        lambda: service.log_text().count(BACK) >= service.log_text().count(LOST),
        60, "every worker to use Redis again", lab.describe,
    )  # fmt: skip
    load.wait_for(created_after(back_at), 50, 60, "201s after Redis is back", lab.describe)
    load.stop()

    # One address, one new connection per request (so both workers take some), one
    # request after the other.
    burst = lab.load(
        "burst", service, form,
        "--client-ip", ONE_CLIENT, "--count", str(BURST_SENT), "--concurrency", "1",
        "--no-keepalive", server_route=False,
    )  # fmt: skip
    burst.finish()
    with lab.redis.client() as client:
        window = client.zcard(_burst_key(form))

    entries = load.entries()
    during = [e for e in entries if killed_at <= e["started"] < back_at]
    burst_entries = burst.entries()
    stored = lab.store().submissions(form.form_id)
    acknowledged = [e for e in entries + burst_entries if created(e)]
    lost = lost_acknowledgements(entries + burst_entries, stored)
    partial = lab.store().partial_commits()
    report(
        "redis-outage",
        sent=len(entries) + len(burst_entries),
        acknowledged=len(acknowledged),
        stored=len(acknowledged) - len(lost),
        lost=len(lost),
        during_outage=len(during),
        created_during_outage=sum(1 for e in during if created(e)),
        burst=",".join(str(e["status"]) for e in burst_entries),
        redis_window=window,
    )
    assert lost == [], lost[:10]
    assert partial == {}, partial
    assert lab.leaks() == []
    # No real submission is refused because Redis is down.
    assert {e["status"] for e in entries} == {201}, lab.describe()
    assert sum(1 for e in during if created(e)) >= 150
    # Back on Redis: the burst limit holds, and the window lives in Redis.
    statuses = [e["status"] for e in burst_entries]
    assert statuses == [201] * BURST_LIMIT + [429] * (BURST_SENT - BURST_LIMIT), statuses
    for refused in burst_entries[BURST_LIMIT:]:
        assert refused["envelope"], refused
        assert refused["error_code"] == "rate_limited", refused
        assert 1 <= int(refused["retry_after"]) <= BURST_WINDOW, refused
    assert window == BURST_LIMIT
    assert service.running, "the service died"
    assert (service.pid, service.starts) == (pid, 1), "the service was restarted"
