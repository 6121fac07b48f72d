"""PostgreSQL shut down in the middle of a load, or killed (SIGKILL to the postmaster
and every backend: a crash, recovered from its WAL on the next start), then started again.

While it is down every request is answered, with 503 service_unavailable and a
Retry-After; once it is back the same service process accepts again, without a restart;
no acknowledged submission is lost and no commit is left half done. A request refused
with 503 may safely be retried: its retry is committed once.
"""

from __future__ import annotations

import pytest

from tests.faults.harness import (
    FAULT_TIMEOUT,
    Entry,
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

POOL_TIMEOUT = 1.0  # seconds a request waits for a connection while the database is down


def _proper_503(entry: Entry) -> bool:
    retry_after = entry["retry_after"] or ""
    return (
        entry["envelope"]
        and entry["error_code"] == "service_unavailable"
        and retry_after.isdigit()
        and int(retry_after) >= 1
    )


@pytest.mark.parametrize("fault", ["stop", "crash"])
def test_a_postgres_restart_mid_load_loses_nothing_and_recovers_without_a_restart(
    lab: Lab, fault: str
) -> None:
    service = lab.serve(INTAKE_DATABASE_POOL_TIMEOUT=str(POOL_TIMEOUT))
    pid = service.pid
    form = lab.new_form()
    load = lab.load("load", service, form, "--concurrency", "8", "--duration", "150")
    load.wait_for(created, 100, 60, "201s before the fault", lab.describe)

    stopped_at = now()
    if fault == "stop":
        lab.postgres.stop("fast")
    else:
        lab.postgres.kill()
    load.wait_for(
        lambda e: e["status"] == 503 and e["started"] >= stopped_at,
        20, 60, "503s while PostgreSQL is down", lab.describe,
    )  # fmt: skip
    lab.postgres.start()
    back_at = now()
    load.wait_for(created_after(back_at), 100, 90, "201s after PostgreSQL is back", lab.describe)
    load.stop()

    entries = load.entries()
    refused = [e for e in entries if e["status"] == 503]
    first_again = min(e["started"] for e in entries if created_after(back_at)(e))
    store = lab.store()
    stored = store.submissions(form.form_id)
    acknowledged = [e for e in entries if created(e)]
    lost = lost_acknowledgements(entries, stored)
    partial = store.partial_commits()

    # Every refused request retried with its key and payload: committed once, or, if
    # its commit did go through before the connection broke, answered with that one.
    held = store.keys(form.form_id)
    retry = lab.replay("retry", service, form, refused)
    retry.finish()
    retries = retry.entries()
    retry_problems = replay_problems({e["key"]: e for e in entries}, retries, held)
    after_retries = store.submissions(form.form_id)

    report(
        f"postgres-{fault}",
        sent=len(entries),
        acknowledged=len(acknowledged),
        stored=len(acknowledged) - len(lost),
        lost=len(lost),
        **{"503s": len(refused)},
        committed_though_503=sum(1 for e in refused if e["key"] in held),
        recovered_after_s=round(first_again - back_at, 1),
        retried=len(retries),
    )
    assert lost == [], lost[:10]
    assert partial == {}, partial
    assert lab.leaks() == []
    assert all(answered(e) for e in entries), "the service stopped answering"
    assert {e["status"] for e in entries} == {201, 503}, {e["status"] for e in entries}
    assert [e for e in refused if not _proper_503(e)] == []
    assert service.running, "the service died"
    assert (service.pid, service.starts) == (pid, 1), "the service was restarted"
    assert retry_problems == [], retry_problems[:10]
    # After the retries, every request ever sent is stored exactly once.
    assert len(after_retries) == len({e["key"] for e in entries})
    assert lost_acknowledgements(retries, after_retries) == []
    assert store.partial_commits() == {}
