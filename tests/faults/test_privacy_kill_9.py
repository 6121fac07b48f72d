"""A retention sweep (`intake purge`) and an erasure on request (`intake erase`) killed with
SIGKILL in the middle, then run again, on a private PostgreSQL and on a SQLite file.

Each submission is erased in a transaction of its own (a sweep's batch, an erasure's
one submission), so whatever the moment of the kill, every submission is either whole
(its row, its data, its outbox row with its payload, its idempotency record) or fully
erased (none of them left, its events' data blanked, and for an erasure its one
`submission.deleted` queued). The second run finishes the work.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from intake.adapters.sqlite.mapping import time_text
from tests.faults.harness import FAULT_TIMEOUT, Form, Lab, report
from tests.support.processes import clean_env, console_script, run_installed_cli

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.timeout(FAULT_TIMEOUT)]

ADA = "ada@example.com"
SWEPT = 60_000  # old enough rows that a sweep takes seconds, in batches of 500
ERASED = 3_000  # an erasure goes one submission at a time

# Old, delivered submissions of the form: each with its outbox row (published) and an
# idempotency record, as a commit leaves them. The address is in a field of each.
_SEED = """
    WITH made AS (
        SELECT n, 'sub_crash' || lpad(n::text, 8, '0') AS sid FROM generate_series(1, %(n)s) AS n
    ),
    subs AS (
        INSERT INTO submissions (submission_id, form_id, workspace_id, status, data, subject,
            reply_to, spam_score, client_ip, created_at)
        SELECT sid, %(form_id)s, %(workspace_id)s, 'accepted',
            json_build_object('email', %(email)s::text, 'note', 'secret ' || n), NULL, %(email)s,
            0, '198.51.100.0', now() - interval '60 days' + n * interval '1 millisecond'
        FROM made
    ),
    events AS (
        INSERT INTO outbox (event_id, event_type, submission_id, form_id, workspace_id,
            payload, created_at, published_at, next_attempt_at)
        SELECT 'evt_crash' || lpad(n::text, 8, '0'), 'submission.created', sid, %(form_id)s,
            %(workspace_id)s,
            json_build_object('type', 'submission.created', 'submission_id', sid,
                'data', json_build_object('email', %(email)s::text, 'note', 'secret ' || n),
                'reply_to', %(email)s::text, 'subject', NULL, 'files', '[]'::json),
            now() - interval '60 days', now() - interval '59 days', now()
        FROM made
    )
    INSERT INTO idempotency (scope, key, fingerprint, submission_id, created_at)
    SELECT 'server:' || %(form_id)s, 'key-' || n, 'f', sid, %(keyed_at)s FROM made
"""

# A submission whose parts disagree: some of it erased, some of it left. `whole`: a
# submission kept still has its outbox row and idempotency record (a purge deletes the
# expired records and the old published rows first, for every submission alike).
_HALF_ERASED = """
    SELECT coalesce(s.submission_id, o.submission_id) AS what
    FROM submissions AS s
    FULL JOIN (SELECT * FROM outbox WHERE event_type <> 'submission.deleted') AS o
        ON o.submission_id = s.submission_id
    LEFT JOIN idempotency AS i ON i.submission_id = coalesce(s.submission_id, o.submission_id)
    WHERE coalesce(s.submission_id, o.submission_id) LIKE 'sub_crash%%'
        AND (
            (s.submission_id IS NOT NULL AND (
                (%(whole)s AND (o.event_id IS NULL OR i.key IS NULL))
                OR (o.event_id IS NOT NULL AND o.payload::text NOT LIKE '%%secret%%')
                OR s.data::text NOT LIKE '%%secret%%'))
            OR (s.submission_id IS NULL AND (
                i.key IS NOT NULL
                OR (o.event_id IS NOT NULL AND o.payload::text LIKE '%%secret%%')))
        )
"""


def _seed(lab: Lab, form: Form, count: int, keyed_at: datetime) -> None:
    params = {
        "keyed_at": keyed_at,
        "n": count,
        "form_id": form.form_id,
        "workspace_id": form.workspace_id,
        "email": ADA,
    }
    with psycopg.connect(lab.database_url, autocommit=True) as conn:
        conn.execute(_SEED, params)


def _rows(lab: Lab, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    with psycopg.connect(lab.database_url, row_factory=dict_row) as conn:
        return conn.execute(query, params).fetchall()


def _left(lab: Lab) -> int:
    [row] = _rows(
        lab, "SELECT count(*) AS n FROM submissions WHERE submission_id LIKE 'sub_crash%'"
    )
    return int(row["n"])


def _kill_midway(lab: Lab, argv: list[str], total: int) -> int:
    """Starts `intake <argv>`, kills it with SIGKILL once a tenth of the submissions are
    gone but not all; the count left when it died."""
    log = (lab.workdir / f"{argv[0]}.log").open("w")
    process = subprocess.Popen(
        [console_script(), *argv], env=lab.env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 120
        while _left(lab) > total - total // 10:
            assert process.poll() is None, f"intake {argv[0]} ended before erasing anything"
            assert time.monotonic() < deadline, "nothing was erased in two minutes"
            time.sleep(0.02)
        assert process.poll() is None, f"intake {argv[0]} finished before it could be killed"
        process.kill()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        log.close()
    return _left(lab)


def _rerun(lab: Lab, *argv: str) -> dict[str, Any]:
    return lab.intake(*argv)


def test_a_retention_sweep_killed_midway_leaves_whole_or_erased_rows(lab: Lab) -> None:
    lab.intake("migrate")
    form = lab.new_form(api_key=False)
    # As old as their submissions: expired, deleted by the purge's first step.
    _seed(lab, form, SWEPT, datetime.now(UTC) - timedelta(days=60))
    lab.intake("form", "update", form.form_id, "--retention-days", "30")

    left = _kill_midway(lab, ["purge"], SWEPT)

    assert 0 < left < SWEPT
    assert _rows(lab, _HALF_ERASED, {"whole": False}) == []
    done = _rerun(lab, "purge")
    report(
        "retention-kill-9",
        seeded=SWEPT,
        left_at_kill=left,
        erased_after=done["expired_submissions"],
    )
    assert done["expired_submissions"] == left
    assert _left(lab) == 0
    assert _rows(lab, "SELECT event_id FROM outbox WHERE submission_id LIKE 'sub_crash%'") == []


def test_an_erasure_killed_midway_leaves_whole_or_erased_submissions(lab: Lab) -> None:
    lab.intake("migrate")
    form = lab.new_form(api_key=False)
    _seed(lab, form, ERASED, datetime.now(UTC))
    argv = ["erase", "--workspace", form.workspace_id, "--email", ADA]

    left = _kill_midway(lab, argv, ERASED)

    assert 0 < left < ERASED
    assert _rows(lab, _HALF_ERASED, {"whole": True}) == []
    deleted = _rows(
        lab,
        "SELECT submission_id, count(*) AS n FROM outbox"
        " WHERE event_type = 'submission.deleted' GROUP BY submission_id",
    )
    assert len(deleted) == ERASED - left
    assert {row["n"] for row in deleted} == {1}

    receipt = _rerun(lab, *argv)
    report("erasure-kill-9", seeded=ERASED, left_at_kill=left, erased_after=receipt["count"])
    assert receipt["count"] == left
    assert _left(lab) == 0
    assert _rows(lab, _HALF_ERASED, {"whole": True}) == []
    counts = _rows(
        lab,
        "SELECT count(DISTINCT submission_id) AS subs, count(*) AS events FROM outbox"
        " WHERE event_type = 'submission.deleted'",
    )
    assert counts == [{"subs": ERASED, "events": ERASED}]


# -- the embedded store: the same scenarios on a SQLite file ------------------------------


class SqliteLab:
    """A migrated SQLite file with a workspace and a form, and the `intake` command on it."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.path = workdir / "intake.db"
        self.env = clean_env(INTAKE_DATABASE_URL=f"sqlite:///{self.path}")
        run_installed_cli(self.env, "migrate")
        workspace = run_installed_cli(self.env, "workspace", "create", "--name", "Faults")
        self.workspace_id: str = workspace["workspace_id"]
        form = run_installed_cli(self.env, "form", "create", "--workspace", self.workspace_id)
        self.form_id: str = form["form_id"]

    def seed(self, count: int, keyed_at: datetime) -> None:
        created = datetime.now(UTC) - timedelta(days=60)
        subs, events, keys = [], [], []
        for n in range(1, count + 1):
            sid, data = f"sub_crash{n:08d}", json.dumps({"email": ADA, "note": f"secret {n}"})
            at = time_text(created + timedelta(milliseconds=n))
            subs.append((sid, self.form_id, self.workspace_id, data, ADA, at))
            payload = json.dumps(
                {"type": "submission.created", "submission_id": sid, "data": json.loads(data)}
            )
            events.append((f"evt_crash{n:08d}", sid, self.form_id, self.workspace_id, payload, at))
            keys.append((f"server:{self.form_id}", f"key-{n}", sid, time_text(keyed_at)))
        with closing(sqlite3.connect(self.path)) as conn, conn:
            conn.executemany(
                "INSERT INTO submissions (submission_id, form_id, workspace_id, status, data,"
                " reply_to, spam_score, client_ip, created_at)"
                " VALUES (?, ?, ?, 'accepted', ?, ?, 0, '198.51.100.0', ?)",
                subs,
            )
            conn.executemany(
                "INSERT INTO outbox (event_id, event_type, submission_id, form_id, workspace_id,"
                " payload, created_at, published_at, next_attempt_at)"
                " VALUES (?, 'submission.created', ?, ?, ?, ?, ?, ?6, ?6)",
                events,
            )
            conn.executemany(
                "INSERT INTO idempotency (scope, key, fingerprint, submission_id, created_at)"
                " VALUES (?, ?, 'f', ?, ?)",
                keys,
            )

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(self.path, timeout=30)) as conn:
            return conn.execute(query).fetchall()

    def left(self) -> int:
        [(count,)] = self.rows("SELECT count(*) FROM submissions")
        return int(count)

    def half_erased(self, *, whole: bool) -> list[str]:
        """The submissions whose parts disagree (as _HALF_ERASED says it for PostgreSQL)."""
        subs = dict(self.rows("SELECT submission_id, data FROM submissions"))
        events: dict[str, list[str]] = {}
        for sid, payload in self.rows(
            "SELECT submission_id, payload FROM outbox WHERE event_type <> 'submission.deleted'"
        ):
            events.setdefault(sid, []).append(payload)
        keyed = {sid for (sid,) in self.rows("SELECT submission_id FROM idempotency")}
        wrong = []
        for sid in set(subs) | set(events) | keyed:
            kept = sid in subs
            payloads = events.get(sid, [])
            if kept:
                broken = "secret" not in subs[sid] or any("secret" not in p for p in payloads)
                broken = broken or (whole and (not payloads or sid not in keyed))
            else:
                broken = sid in keyed or any("secret" in p for p in payloads)
            if broken:
                wrong.append(sid)
        return wrong


def _kill_sqlite_midway(lab: SqliteLab, argv: list[str], total: int) -> int:
    log = (lab.workdir / f"{argv[0]}.log").open("w")
    process = subprocess.Popen(
        [console_script(), *argv], env=lab.env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 120
        while lab.left() > total - total // 10:
            assert process.poll() is None, f"intake {argv[0]} ended before erasing a tenth"
            assert time.monotonic() < deadline, "nothing was erased in two minutes"
            time.sleep(0.01)
        assert process.poll() is None, f"intake {argv[0]} finished before it could be killed"
        process.kill()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        log.close()
    return lab.left()


def test_a_retention_sweep_killed_midway_on_sqlite_leaves_whole_or_erased_rows(
    tmp_path: Path,
) -> None:
    lab = SqliteLab(tmp_path)
    lab.seed(SWEPT, datetime.now(UTC) - timedelta(days=60))
    run_installed_cli(lab.env, "form", "update", lab.form_id, "--retention-days", "30")

    left = _kill_sqlite_midway(lab, ["purge"], SWEPT)

    assert 0 < left < SWEPT
    assert lab.half_erased(whole=False) == []
    done = run_installed_cli(lab.env, "purge")
    report("retention-kill-9-sqlite", seeded=SWEPT, left_at_kill=left)
    assert done["expired_submissions"] == left
    assert lab.left() == 0


def test_an_erasure_killed_midway_on_sqlite_leaves_whole_or_erased_submissions(
    tmp_path: Path,
) -> None:
    lab = SqliteLab(tmp_path)
    lab.seed(ERASED, datetime.now(UTC))
    argv = ["erase", "--workspace", lab.workspace_id, "--email", ADA]

    left = _kill_sqlite_midway(lab, argv, ERASED)

    assert 0 < left < ERASED
    assert lab.half_erased(whole=True) == []
    receipt = run_installed_cli(lab.env, *argv)
    report("erasure-kill-9-sqlite", seeded=ERASED, left_at_kill=left)
    assert receipt["count"] == left
    assert lab.left() == 0
    assert lab.half_erased(whole=True) == []
    [(subs, events)] = lab.rows(
        "SELECT count(DISTINCT submission_id), count(*) FROM outbox"
        " WHERE event_type = 'submission.deleted'"
    )
    assert (subs, events) == (ERASED, ERASED)
