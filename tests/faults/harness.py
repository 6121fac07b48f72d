"""What the fault scenarios share: `intake serve` processes on private PostgreSQL and
Redis instances, the `intake` command line, load generator runs, and the read-back of
the store.

Every scenario drives real processes over real sockets: the service is started with
`intake serve`, set up with `intake ... --json`, loaded by `python -m
tests.support.loadgen` (a process of its own), and judged by what the private
PostgreSQL holds afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from attrs import frozen
from psycopg.rows import dict_row

from tests.support.instances import PostgresInstance, RedisInstance
from tests.support.processes import ServedProcess, clean_env, run_installed_cli, tail, wait_for

REPO = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 60.0  # seconds for `intake serve` to answer /readyz on a busy machine
STOP_TIMEOUT = 15.0
LOAD_TIMEOUT = 90.0  # seconds a load run may take to drain after it is told to stop
# Each scenario's time limit (pytest-timeout): its servers, loads and waits take minutes.
FAULT_TIMEOUT = 900
LOG_TAIL = 40

# Per-IP limits stay as shipped; the per-form and per-key ceilings are lifted, so that
# the load is refused by the fault under test and never by the rate limiter.
LIFTED_LIMITS = {
    "INTAKE_RATE_LIMIT_PUBLIC_FORM": "1000000/600",
    "INTAKE_RATE_LIMIT_SERVER_BURST": "1000000/30",
    "INTAKE_RATE_LIMIT_SERVER_SUSTAINED": "1000000/600",
}
# The fields the load generator sends that are control fields, not stored data.
CONTROL_FIELDS = frozenset({"cf-turnstile-response"})

Entry = dict[str, Any]


def report(scenario: str, **figures: object) -> None:
    """The scenario's one summary line (make test-faults runs pytest with -s)."""
    print(f"\nfaults: {scenario} " + " ".join(f"{name}={value}" for name, value in figures.items()))


# -- the load generator ----------------------------------------------------------------


class LoadRun:
    """`python -m tests.support.loadgen` in a process of its own, and its ledger."""

    def __init__(self, workdir: Path, name: str, argv: Sequence[str]) -> None:
        self.name = name
        self.ledger = workdir / f"{name}.jsonl"
        self.summary_path = workdir / f"{name}.summary.json"
        self.log = workdir / f"{name}.log"
        with self.log.open("w") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.support.loadgen", *argv,
                 "--ledger", str(self.ledger), "--summary", str(self.summary_path)],
                cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip

    def entries(self) -> list[Entry]:
        """What the ledger holds so far: whole lines only (the last may be half written)."""
        try:
            text = self.ledger.read_text()
        except FileNotFoundError:
            return []
        found: list[Entry] = []
        for line in text.split("\n"):
            if not line:
                continue
            try:
                found.append(json.loads(line))
            except ValueError:
                break
        return found

    def count(self, condition: Callable[[Entry], bool]) -> int:
        return sum(1 for entry in self.entries() if condition(entry))

    def wait_for(
        self,
        condition: Callable[[Entry], bool],
        at_least: int,
        timeout: float,
        what: str,
        diagnostics: Callable[[], str] = lambda: "",
    ) -> None:
        def enough() -> bool:
            if self.process.poll() is not None:
                pytest.fail(f"the load generator ended early\n{tail(self.log, LOG_TAIL)}")
            return self.count(condition) >= at_least

        wait_for(enough, timeout, what, lambda: f"{self.describe()}\n{diagnostics()}")

    def finish(self, timeout: float = LOAD_TIMEOUT) -> dict[str, Any]:
        """Waits for the run to end by itself (a count, a duration or a replay)."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"the load generator did not finish within {timeout} s")
        assert self.process.returncode == 0, tail(self.log, LOG_TAIL)
        summary: dict[str, Any] = json.loads(self.summary_path.read_text())
        return summary

    def stop(self, timeout: float = LOAD_TIMEOUT) -> dict[str, Any]:
        """SIGTERM: no new requests; those in flight are answered and written down."""
        if self.process.poll() is None:
            self.process.terminate()
        return self.finish(timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def describe(self) -> str:
        statuses: dict[str, int] = {}
        for entry in self.entries():
            label = str(entry["status"] or entry["transport_error"])
            statuses[label] = statuses.get(label, 0) + 1
        return f"--- load {self.name}: {statuses} ---\n{tail(self.log, 10)}"


# -- the deployment under test -----------------------------------------------------------


@frozen
class Form:
    workspace_id: str
    form_id: str
    public_form_key: str
    api_key: str | None


class Lab:
    """A private PostgreSQL and Redis, and the services and load runs started on them;
    `close()` stops every process it started."""

    def __init__(self, postgres: PostgresInstance, redis: RedisInstance, workdir: Path) -> None:
        self.postgres = postgres
        self.redis = redis
        self.workdir = workdir
        self.database_url = postgres.create_database("intake")
        self.env = clean_env(
            INTAKE_DATABASE_URL=self.database_url,
            INTAKE_REDIS_URL=redis.url,
            INTAKE_TRUSTED_PROXIES="127.0.0.1/32",
            INTAKE_LOG_LEVEL="info",
            **LIFTED_LIMITS,
        )
        self.services: list[ServedProcess] = []
        self.loads: list[LoadRun] = []
        # What must never reach a log: the load generator's field values (its addresses
        # and its message text) and every secret a scenario handles.
        self.never_logged: list[str] = ["@example.com", "Hello, this is message"]

    def serve(self, workers: int = 1, **env: str) -> ServedProcess:
        """`intake serve` on a port of its own, ready on /readyz; `start()` again after a
        `kill()` restarts it on the same port, so that a load run keeps its URL."""
        service = ServedProcess(
            {**self.env, **env}, self.workdir / f"serve-{len(self.services)}.log",
            workers=workers, ready_path="/readyz", startup_timeout=READY_TIMEOUT,
            stop_timeout=STOP_TIMEOUT, log_tail=LOG_TAIL,
        )  # fmt: skip
        self.services.append(service)
        service.start()
        return service

    def intake(self, *argv: str) -> dict[str, Any]:
        return run_installed_cli(self.env, *argv, timeout=120)

    def new_form(self, *form_args: str, api_key: bool = True) -> Form:
        # The quota is not what the scenarios test: a limit no run comes near.
        workspace = self.intake(
            "workspace", "create", "--name", "Faults", "--plan", "free",
            "--monthly-limit", "10000000",
        )  # fmt: skip
        workspace_id = workspace["workspace_id"]
        form = self.intake("form", "create", "--workspace", workspace_id, *form_args)
        key = self.intake("key", "create", "--workspace", workspace_id) if api_key else None
        if key is not None:
            self.never_logged.append(key["api_key"])
        return Form(
            workspace_id=workspace_id,
            form_id=form["form_id"],
            public_form_key=form["public_form_key"],
            api_key=key["api_key"] if key is not None else None,
        )

    def load(
        self, name: str, service: ServedProcess, form: Form, *argv: str, server_route: bool = True
    ) -> LoadRun:
        """A load run on `form`; with `server_route` and an API key, every fourth request
        goes to the server endpoint."""
        target = ["--base-url", service.base, "--public-key", form.public_form_key]
        if server_route and form.api_key is not None:
            target += ["--form-id", form.form_id, "--api-key", form.api_key]
        run = LoadRun(self.workdir, name, [*target, *argv])
        self.loads.append(run)
        return run

    def replay(
        self, name: str, service: ServedProcess, form: Form, entries: Iterable[Entry]
    ) -> LoadRun:
        """Re-sends `entries` (same key, payload, encoding, route, address)."""
        source = self.workdir / f"{name}.source.jsonl"
        source.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
        return self.load(name, service, form, "--replay", str(source), "--concurrency", "8")

    def store(self) -> StoreView:
        return StoreView(self.database_url)

    def leaks(self) -> list[str]:
        """The submission contents and secrets found in the services' logs (none)."""
        logs = "".join(service.log_text() for service in self.services)
        return [text for text in self.never_logged if text in logs]

    def describe(self) -> str:
        parts = [service.describe() for service in self.services]
        parts += [load.describe() for load in self.loads]
        return "\n".join(parts)

    def close(self) -> None:
        for load in self.loads:
            load.kill()
        for service in self.services:
            service.stop()


# -- reading the store back ------------------------------------------------------------

# Each names a way a commit could have been left half done; every query returns the
# rows that show it (none, when the store is whole).
_PARTIAL = {
    "submission without its outbox row": """
        SELECT s.submission_id AS what FROM submissions AS s
        WHERE NOT EXISTS (SELECT 1 FROM outbox AS o WHERE o.submission_id = s.submission_id)
    """,
    "outbox row without its submission": """
        SELECT o.event_id AS what FROM outbox AS o
        WHERE NOT EXISTS (SELECT 1 FROM submissions AS s WHERE s.submission_id = o.submission_id)
    """,
    "submission with several outbox rows": """
        SELECT submission_id AS what FROM outbox GROUP BY submission_id HAVING count(*) > 1
    """,
    "outbox event type disagreeing with the status": """
        SELECT s.submission_id || ' ' || s.status || ' ' || o.event_type AS what
        FROM submissions AS s JOIN outbox AS o ON o.submission_id = s.submission_id
        WHERE o.event_type <> CASE s.status WHEN 'accepted' THEN 'submission.created'
                                            ELSE 'submission.flagged' END
    """,
    "idempotency record naming no stored submission": """
        SELECT i.scope || ' ' || i.key AS what FROM idempotency AS i
        WHERE NOT EXISTS (SELECT 1 FROM submissions AS s WHERE s.submission_id = i.submission_id)
    """,
    # Every request of the load generator carries a key of its own: a submission that no
    # key names would be a second commit of one request.
    "submission that no idempotency record names": """
        SELECT s.submission_id AS what FROM submissions AS s
        WHERE NOT EXISTS (SELECT 1 FROM idempotency AS i WHERE i.submission_id = s.submission_id)
    """,
    "quota count differing from the accepted submissions": """
        SELECT coalesce(u.workspace_id, a.workspace_id) || ' ' || coalesce(u.period, a.period)
            || ': counted ' || coalesce(u.count, 0) || ', accepted ' || coalesce(a.n, 0) AS what
        FROM monthly_usage AS u
        FULL JOIN (
            SELECT workspace_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM') AS period,
                count(*) AS n
            FROM submissions WHERE status = 'accepted' GROUP BY 1, 2
        ) AS a ON a.workspace_id = u.workspace_id AND a.period = u.period
        WHERE coalesce(u.count, 0) <> coalesce(a.n, 0)
    """,
}


@frozen
class Stored:
    submission_id: str
    status: str
    data: dict[str, Any]
    created_at: datetime


class StoreView:
    """The private database read directly: what a commit left, not what a cache says."""

    def __init__(self, url: str) -> None:
        self._url = url

    def _rows(self, query: str, params: Sequence[object] = ()) -> list[dict[str, Any]]:
        with psycopg.connect(self._url, row_factory=dict_row, connect_timeout=10) as conn:
            return conn.execute(query, params).fetchall()

    def submissions(self, form_id: str) -> dict[str, Stored]:
        rows = self._rows(
            "SELECT submission_id, status, data, created_at FROM submissions WHERE form_id = %s",
            (form_id,),
        )
        return {
            row["submission_id"]: Stored(
                row["submission_id"], row["status"], row["data"], row["created_at"]
            )
            for row in rows
        }

    def keys(self, form_id: str) -> dict[str, str]:
        """Idempotency-Key to the submission it names, for both routes of the form (a
        public key is scoped by its client network too)."""
        rows = self._rows(
            "SELECT key, submission_id FROM idempotency WHERE scope = %s OR scope LIKE %s",
            (f"server:{form_id}", f"public:{form_id}:%"),
        )
        return {row["key"]: row["submission_id"] for row in rows}

    def partial_commits(self) -> dict[str, list[str]]:
        """Every half-done commit found, by kind (empty when the store is whole)."""
        found: dict[str, list[str]] = {}
        for kind, query in _PARTIAL.items():
            rows = [str(row["what"]) for row in self._rows(query)]
            if rows:
                found[kind] = rows[:10]
        return found


# -- judging a ledger against the store ------------------------------------------------


def answered(entry: Entry) -> bool:
    return entry["status"] is not None


def created(entry: Entry) -> bool:
    return bool(entry["status"] == 201)


def created_after(moment: float) -> Callable[[Entry], bool]:
    return lambda entry: entry["status"] == 201 and entry["started"] >= moment


def stored_data(payload: Mapping[str, Any]) -> dict[str, Any]:
    """What a payload is stored as: its data fields, control fields split out."""
    return {
        name: value
        for name, value in payload.items()
        if name not in CONTROL_FIELDS and not name.startswith("_")
    }


def lost_acknowledgements(entries: Iterable[Entry], stored: Mapping[str, Stored]) -> list[str]:
    """Acknowledged (201, or a 200 replay) requests whose submission is not in the store
    as it was sent; each as `key: why`."""
    lost: list[str] = []
    for entry in entries:
        if entry["status"] not in (200, 201):
            continue
        found = stored.get(entry["submission_id"])
        if found is None:
            lost.append(f"{entry['key']}: {entry['submission_id']} is not stored")
        elif found.data != stored_data(entry["payload"]):
            lost.append(f"{entry['key']}: stored as {found.data!r}")
    return lost


def replay_problems(
    originals: Mapping[str, Entry], replays: Iterable[Entry], held_before: Mapping[str, str]
) -> list[str]:
    """Each re-sent request against what its key held before the re-send: an original
    201 or a stored request must be replayed (200, Idempotent-Replayed, the same id); a
    request that was never stored is committed now (201)."""
    problems: list[str] = []
    for again in replays:
        key = again["key"]
        first = originals[key]
        expected = first["submission_id"] if created(first) else held_before.get(key)
        if expected is not None:
            if (again["status"], again["replayed"], again["submission_id"]) != (
                200,
                True,
                expected,
            ):
                problems.append(
                    f"{key}: first {first['status']}, held {expected}; the retry got "
                    f"{again['status']} replayed={again['replayed']} {again['submission_id']}"
                )
        elif again["status"] != 201:
            problems.append(f"{key}: never stored, yet the retry got {again['status']}")
    return problems


def p99(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


def now() -> float:
    """The clock the load generator stamps its ledger with (both run on this host)."""
    return time.time()
