"""The storage ceiling: the service's own commit statement, as fast as PostgreSQL runs
it (pgbench, or psycopg's asyncio client where pgbench is missing)."""

from __future__ import annotations

import asyncio
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from attrs import frozen

from bench.prefill import fast_time_sorted_id, sample_submission
from bench.storage import MONTHLY_LIMIT, StorageError, Target
from intake.adapters.postgres.mapping import commit_params
from intake.adapters.postgres.submissions import _COMMIT as COMMIT_STATEMENT
from intake.domain.model import OutboxEvent
from intake.domain.quota import period
from intake.ports.submissions import CommitPlan, FormCheck, QuotaCharge

PGBENCH_PATHS = ("/usr/lib/postgresql/15/bin/pgbench",)


@frozen
class StorageResult:
    tool: str
    clients: int
    transactions: int
    failed: int
    duration_s: float
    commits_per_s: float
    latency_ms: dict[str, float]

    def as_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "clients": self.clients,
            "transactions": self.transactions,
            "failed": self.failed,
            "duration_s": round(self.duration_s, 3),
            "commits_per_s": round(self.commits_per_s, 1),
            "latency_ms": self.latency_ms,
        }


def find_pgbench() -> str | None:
    for candidate in (shutil.which("pgbench"), *PGBENCH_PATHS):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def commit_arguments(target: Target, body: str) -> dict[str, object]:
    """The arguments of the service's commit of one bench submission."""
    now = datetime.now(UTC)
    submission = sample_submission(target, body, now)
    plan = CommitPlan(
        submission=submission,
        event=OutboxEvent.for_submission("evt_0", submission),
        idempotency=None,
        quota=QuotaCharge(target.workspace_id, period(now), MONTHLY_LIMIT * 2),
        check=FormCheck(target.form_id, target.public_form_key),
    )
    return dict(commit_params(plan))


# Fresh ids per transaction, sorting after everything before them (a time prefix, then
# the client and a random number), so that inserts land at the right edge of the indexes
# as the service's time-sorted ids do.
_ID_EXPRESSIONS = {
    "submission_id": "('sub_' || to_char(now(), 'YYYYMMDDHH24MISSUS') || :client_id || '_' || :r)",
    "event_id": "('evt_' || to_char(now(), 'YYYYMMDDHH24MISSUS') || :client_id || '_' || :r)",
    "created_at": "now()",
    "event_created_at": "now()",
}
_ID_EXPRESSIONS["event_submission_id"] = _ID_EXPRESSIONS["submission_id"]


def pgbench_literal(value: object) -> str:
    """A SQL literal pgbench leaves alone: with --protocol=prepared it reads every `:name`
    in a statement, even inside a string, as a variable, so a colon is written as the
    escape `\\x3a` (a JSON payload holds times)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace("'", "''").replace(":", "\\x3a")
    return f"E'{text}'"


def pgbench_script(arguments: Mapping[str, object]) -> str:
    """The service's commit statement with its arguments written in: literals, and
    expressions for what changes per transaction."""

    def argument(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in _ID_EXPRESSIONS:
            return _ID_EXPRESSIONS[name]
        return pgbench_literal(arguments[name])

    statement = re.sub(r"%\((\w+)\)s", argument, COMMIT_STATEMENT)
    # pgbench reads a statement up to its semicolon; one line keeps it simple.
    one_line = " ".join(statement.split())
    return f"\\set r random(1, 1000000000000)\n{one_line};\n"


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)

    def at(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 3)

    return {
        "mean": round(sum(ordered) / len(ordered), 3),
        "p50": at(50),
        "p90": at(90),
        "p99": at(99),
        "max": round(ordered[-1], 3),
    }


_TPS = re.compile(r"^tps = ([\d.]+)", re.MULTILINE)
_PROCESSED = re.compile(r"number of transactions actually processed: (\d+)")
_FAILED = re.compile(r"number of failed transactions: (\d+)")


def parse_pgbench(output: str, latencies_ms: list[float], clients: int) -> StorageResult:
    tps = _TPS.search(output)
    processed = _PROCESSED.search(output)
    if tps is None or processed is None:
        raise StorageError(f"pgbench printed no result:\n{output[-2000:]}")
    failed = _FAILED.search(output)
    transactions = int(processed.group(1))
    rate = float(tps.group(1))
    return StorageResult(
        tool="pgbench",
        clients=clients,
        transactions=transactions,
        failed=int(failed.group(1)) if failed else 0,
        duration_s=transactions / rate if rate else 0.0,
        commits_per_s=rate,
        latency_ms=_percentiles(latencies_ms),
    )


def run_pgbench(
    pgbench: str,
    url: str,
    target: Target,
    body: str,
    *,
    seconds: float,
    clients: int,
    threads: int,
    workdir: Path,
) -> StorageResult:
    script = pgbench_script(commit_arguments(target, body))
    script_path = workdir / "commit.sql"
    script_path.write_text(script)
    logs = workdir / "pgbench-log"
    logs.mkdir(exist_ok=True)
    command = [
        pgbench, "--no-vacuum", "--protocol=prepared",
        f"--client={clients}", f"--jobs={threads}", f"--time={max(1, round(seconds))}",
        f"--file={script_path}", "--log", f"--log-prefix={logs / 'tx'}", url,
    ]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=seconds + 120, check=False
    )
    if done.returncode != 0:
        raise StorageError(f"pgbench exited with {done.returncode}: {done.stderr.strip()}")
    latencies: list[float] = []
    for log in logs.iterdir():
        for line in log.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[2].isdigit():
                latencies.append(int(fields[2]) / 1000)
    return parse_pgbench(done.stdout + done.stderr, latencies, clients)


async def _psycopg_ceiling(
    url: str, arguments: Mapping[str, object], seconds: float, clients: int
) -> StorageResult:
    """Where pgbench is missing: the same statement from `clients` connections of one
    asyncio loop (the client's own cost then weighs on the figure)."""
    latencies: list[float] = []
    failed = 0
    deadline = time.perf_counter() + seconds

    async def client(number: int) -> None:
        nonlocal failed
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            sequence = 0
            while time.perf_counter() < deadline:
                sequence += 1
                stamp = datetime.now(UTC)
                ms = int(stamp.timestamp() * 1000)
                params = dict(arguments)
                params["submission_id"] = params["event_submission_id"] = fast_time_sorted_id(
                    "sub", ms, secrets.token_bytes(12)
                )
                params["event_id"] = fast_time_sorted_id("evt", ms, secrets.token_bytes(16))
                params["created_at"] = params["event_created_at"] = stamp
                began = time.perf_counter()
                try:
                    await conn.execute(COMMIT_STATEMENT, params)
                except psycopg.Error:
                    failed += 1
                latencies.append((time.perf_counter() - began) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    elapsed = time.perf_counter() - started
    return StorageResult(
        tool="psycopg",
        clients=clients,
        transactions=len(latencies),
        failed=failed,
        duration_s=elapsed,
        commits_per_s=(len(latencies) - failed) / elapsed if elapsed else 0.0,
        latency_ms=_percentiles(latencies),
    )


def storage_ceiling(
    url: str,
    target: Target,
    body: str,
    *,
    seconds: float,
    clients: int,
    threads: int,
    workdir: Path,
) -> StorageResult:
    pgbench = find_pgbench()
    if pgbench is not None:
        return run_pgbench(
            pgbench, url, target, body,
            seconds=seconds, clients=clients, threads=threads, workdir=workdir,
        )  # fmt: skip
    arguments = commit_arguments(target, body)
    return asyncio.run(_psycopg_ceiling(url, arguments, seconds, clients))
