"""The running `intake relay` sweeps the forms' retention on its own schedule
(INTAKE_RETENTION_SWEEP_INTERVAL): a submission past its form's retention, once
delivered, is erased while the relay runs, with no `intake purge`; a form without a
retention, or a younger submission, keeps its own. `0` leaves the sweep to the purge.
The same sweep cuts a full client address past INTAKE_CLIENT_IP_FULL_HOURS to its
network, and teaches the spam filter the submissions nobody triaged for
INTAKE_SPAM_SETTLE_DAYS."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from attrs import evolve

from intake.adapters.sqlite import open_sqlite_store
from tests.contract.builders import FORM_ID, form, plan, seed, submission
from tests.support.processes import IntakeProcess, clean_env, run_cli, wait_for

pytestmark = pytest.mark.slow

DEADLINE = 60.0
KEPT_FORM = form("frm_2", "ws_1", "pk0form2")


async def _prepare(url: str, now: datetime) -> tuple[str, str, str]:
    """An old and a young submission of frm_1, an old one of frm_2; events published."""
    store = await open_sqlite_store(url)
    try:
        await seed(store, form(), KEPT_FORM)
        old = submission(1, created_at=now - timedelta(days=40))
        young = submission(2, created_at=now - timedelta(days=1))
        other = submission(3, form_id="frm_2", created_at=now - timedelta(days=40))
        for each in (old, young, other):
            await store.submissions.commit(plan(each))
        while await store.deliveries.fan_out(now, 100):
            pass
    finally:
        await store.close()
    return old.submission_id, young.submission_id, other.submission_id


def _stored(path: Path) -> set[str]:
    with closing(sqlite3.connect(path)) as conn:
        return {row[0] for row in conn.execute("SELECT submission_id FROM submissions")}


@pytest.mark.parametrize("interval", ["1", "0"])
def test_the_running_relay_erases_what_is_past_its_forms_retention(
    tmp_path: Path, interval: str
) -> None:
    path = tmp_path / "intake.db"
    env = clean_env(
        INTAKE_DATABASE_URL=f"sqlite:///{path}", INTAKE_RETENTION_SWEEP_INTERVAL=interval
    )
    old, young, other = asyncio.run(_prepare(f"sqlite:///{path}", datetime.now(UTC)))
    run_cli(env, "form", "update", FORM_ID, "--retention-days", "30")
    relay = IntakeProcess(env, tmp_path / "relay.log", ["relay"], stop_signal=signal.SIGTERM)

    with relay:
        wait_for(lambda: "relay started" in relay.log_text(), DEADLINE, "the start", relay.describe)
        if interval == "0":
            time.sleep(2)  # as long as a sweep every second would have needed
        else:
            wait_for(lambda: old not in _stored(path), DEADLINE, "the sweep", relay.describe)

    assert relay.returncode == 0, relay.describe()
    expected = {young, other} if interval == "1" else {old, young, other}
    assert _stored(path) == expected


async def _full_addresses(url: str, now: datetime) -> None:
    """Two submissions kept with their full client address, 30 hours and an hour old."""
    store = await open_sqlite_store(url)
    try:
        await seed(store)
        for n, hours in ((1, 30), (2, 1)):
            full = submission(n, created_at=now - timedelta(hours=hours))
            await store.submissions.commit(plan(evolve(full, client_ip=f"2001:db8:5:{n}::7")))
    finally:
        await store.close()


def _client_ips(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT client_ip FROM submissions ORDER BY submission_id")
        return [row[0] for row in rows.fetchall()]


def test_the_running_relay_cuts_full_client_addresses_past_their_hours(tmp_path: Path) -> None:
    path = tmp_path / "intake.db"
    env = clean_env(INTAKE_DATABASE_URL=f"sqlite:///{path}", INTAKE_RETENTION_SWEEP_INTERVAL="1")
    asyncio.run(_full_addresses(f"sqlite:///{path}", datetime.now(UTC)))
    relay = IntakeProcess(env, tmp_path / "relay.log", ["relay"], stop_signal=signal.SIGTERM)

    with relay:
        wait_for(
            lambda: _client_ips(path)[0] == "2001:db8:5::", DEADLINE, "the sweep", relay.describe
        )

    assert relay.returncode == 0, relay.describe()
    assert _client_ips(path) == ["2001:db8:5::", "2001:db8:5:2::7"]


def _taught(path: Path) -> dict[str, str | None]:
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT submission_id, taught FROM submissions").fetchall()
        return {row[0]: row[1] for row in rows}


def test_the_running_relay_teaches_the_untouched_submissions(tmp_path: Path) -> None:
    path = tmp_path / "intake.db"
    env = clean_env(INTAKE_DATABASE_URL=f"sqlite:///{path}", INTAKE_RETENTION_SWEEP_INTERVAL="1")
    old, young, other = asyncio.run(_prepare(f"sqlite:///{path}", datetime.now(UTC)))
    relay = IntakeProcess(env, tmp_path / "relay.log", ["relay"], stop_signal=signal.SIGTERM)

    with relay:
        wait_for(lambda: _taught(path)[old] == "ham", DEADLINE, "the sweep", relay.describe)

    assert relay.returncode == 0, relay.describe()
    # 40 days untouched teach; a day does not (INTAKE_SPAM_SETTLE_DAYS, 14).
    assert _taught(path) == {old: "ham", young: None, other: "ham"}
