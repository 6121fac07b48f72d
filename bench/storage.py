"""The bench's own PostgreSQL database and Redis keys, the workspace and form it submits
to, the bulk prefill of stored rows, and the storage ceiling.

Everything is made for the run and removed after it: a database `intake_bench_<random>`
on the shared server, and in Redis database 14 only the rate-limit windows of the run's
own form (their keys carry its form id).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import psycopg
import redis
from attrs import frozen
from psycopg import sql

from intake.adapters.postgres.mapping import commit_params
from intake.adapters.postgres.submissions import _COMMIT as COMMIT_STATEMENT
from intake.adapters.ratelimit_redis import DEFAULT_PREFIX
from intake.adapters.sql_rows import json_text
from intake.domain.client_network import client_network
from intake.domain.idempotency import Route, fingerprint, scope
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.quota import period
from intake.ports.submissions import CommitPlan, FormCheck, QuotaCharge

PGBENCH_PATHS = ("/usr/lib/postgresql/15/bin/pgbench",)
# The bench's workspace never meets its quota: the largest limit the column holds.
MONTHLY_LIMIT = 2_000_000_000
PREFILL_BATCH = 50_000
PREFILL_SPAN = timedelta(days=30)


class StorageError(RuntimeError):
    """PostgreSQL or Redis is not there, or refused what the bench needs."""


def with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def where(url: str) -> str:
    """Host and port only: a URL may carry a password."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or ''}"


class BenchDatabase:
    """A database of the run's own on the shared server, dropped at the end."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.name = f"intake_bench_{secrets.token_hex(6)}"
        self.url = with_database(admin_url, self.name)
        self._created = False

    def create(self) -> None:
        try:
            with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as conn:
                conn.execute(
                    sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(
                        sql.Identifier(self.name)
                    )
                )
        except psycopg.Error as error:
            raise StorageError(
                f"cannot create a database on PostgreSQL at {where(self.admin_url)}: {error}"
            ) from error
        self._created = True

    def drop(self) -> None:
        if not self._created:
            return
        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.name))
            )
        self._created = False

    def count_submissions(self) -> int:
        with psycopg.connect(self.url, autocommit=True) as conn:
            row = conn.execute("SELECT count(*) FROM submissions").fetchone()
        return int(row[0]) if row else 0

    def statuses(self) -> dict[str, int]:
        with psycopg.connect(self.url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT status, count(*) FROM submissions GROUP BY status"
            ).fetchall()
        return {str(status): int(count) for status, count in rows}

    def settle(self) -> None:
        """After a bulk load: the statistics and visibility map a database that grew
        slowly would have, and a checkpoint, so that neither autovacuum nor the next
        checkpoint's full-page writes fall into a measurement."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            for table in ("submissions", "outbox", "idempotency", "monthly_usage"):
                conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(table)))
            conn.execute("CHECKPOINT")


def redis_client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=10)


def check_redis(url: str) -> None:
    try:
        with redis_client(url) as client:
            client.ping()
    except (redis.RedisError, OSError) as error:
        raise StorageError(f"Redis is not reachable at {where(url)}: {error}") from error


def clear_rate_limits(url: str, form_id: str) -> int:
    """Deletes the run's own windows: every key of intake's prefix that names its form."""
    removed = 0
    with redis_client(url) as client:
        batch: list[bytes] = []
        for key in client.scan_iter(match=f"{DEFAULT_PREFIX}*{{{form_id}}}*", count=5000):
            batch.append(key)
            if len(batch) >= 5000:
                removed += int(client.unlink(*batch))
                batch.clear()
        if batch:
            removed += int(client.unlink(*batch))
    return removed


# The workspace and form, made with the `intake` command as an operator would


@frozen
class Target:
    workspace_id: str
    form_id: str
    public_form_key: str

    @property
    def path(self) -> str:
        return f"/f/{self.public_form_key}"


def intake(intake_script: str, env: Mapping[str, str], *argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [intake_script, *argv, "--json"],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise StorageError(f"intake {' '.join(argv)} failed: {done.stderr.strip()}")
    document = json.loads(done.stdout)
    if not isinstance(document, dict):
        raise StorageError(f"intake {' '.join(argv)} printed {done.stdout!r}")
    return document


def provision(intake_script: str, env: Mapping[str, str]) -> Target:
    intake(intake_script, env, "migrate")
    workspace = intake(
        intake_script, env,
        "workspace", "create", "--name", "bench", "--plan", "business",
        "--monthly-limit", str(MONTHLY_LIMIT),
    )  # fmt: skip
    workspace_id = str(workspace["workspace_id"])
    form = intake(intake_script, env, "form", "create", "--workspace", workspace_id)
    return Target(workspace_id, str(form["form_id"]), str(form["public_form_key"]))


# Rows as the service writes them


def bench_data(body: str) -> dict[str, Any]:
    """The stored data of a submission of `body` (no control fields in it)."""
    return dict(parse_qsl(body, keep_blank_values=True))


def sample_submission(target: Target, body: str, now: datetime) -> Submission:
    data = bench_data(body)
    return Submission(
        submission_id="sub_0",
        form_id=target.form_id,
        workspace_id=target.workspace_id,
        status=SubmissionStatus.ACCEPTED,
        data=data,
        created_at=now,
        reply_to=str(data.get("email")) if data.get("email") else None,
        client_ip="198.18.0.1",
    )


_RFC4648 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_CROCKFORD = b"0123456789abcdefghjkmnpqrstvwxyz"
_TO_CROCKFORD = bytes.maketrans(_RFC4648, _CROCKFORD)


def fast_time_sorted_id(prefix: str, unix_ms: int, random: bytes) -> str:
    """intake.domain.ids.time_sorted_id by the C base32 codec, for a million rows. The
    value is right-aligned in whole 40-bit groups; the leading zero digits are cut."""
    shift = len(random) * 8
    chars = -(-(48 + shift) // 5)
    groups = -(-chars // 8)
    value = ((unix_ms & (2**48 - 1)) << shift) | int.from_bytes(random, "big")
    text = base64.b32encode(value.to_bytes(groups * 5, "big")).translate(_TO_CROCKFORD)
    return f"{prefix}_{text[groups * 8 - chars :].decode('ascii')}"


def _copy_text(value: object) -> str:
    """One column in COPY's text format. Nothing the prefill writes needs escaping."""
    if value is None:
        return "\\N"
    text = str(value)
    if any(ch in text for ch in "\t\n\r\\"):
        raise ValueError(f"prefill value needs COPY escaping: {text!r}")
    return text


def prefill_rows(
    target: Target, body: str, count: int, until: datetime
) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """Batches of COPY lines for submissions, outbox and idempotency: `count` accepted
    submissions spread over the month before `until`, in time order, each with its
    delivered outbox event and an (expired) idempotency record."""
    data = bench_data(body)
    data_json = json_text(data)
    data_fingerprint = fingerprint(data)
    sample = sample_submission(target, body, until)
    key_scope = scope(Route.PUBLIC, target.form_id, client_network(sample.client_ip or ""))
    start_ms = int((until - PREFILL_SPAN).timestamp() * 1000)
    step_ms = max(1, int(PREFILL_SPAN.total_seconds() * 1000) // max(count, 1))
    common = "\t".join((target.form_id, target.workspace_id))
    made = 0
    while made < count:
        n = min(PREFILL_BATCH, count - made)
        randoms = os.urandom(n * 28)
        submissions: list[str] = []
        events: list[str] = []
        records: list[str] = []
        for i in range(n):
            ms = start_ms + (made + i) * step_ms
            sub_id = fast_time_sorted_id("sub", ms, randoms[i * 28 : i * 28 + 12])
            evt_id = fast_time_sorted_id("evt", ms, randoms[i * 28 + 12 : i * 28 + 28])
            created = datetime.fromtimestamp(ms / 1000, UTC)
            stamp = created.isoformat()
            submission = Submission(
                submission_id=sub_id,
                form_id=sample.form_id,
                workspace_id=sample.workspace_id,
                status=SubmissionStatus.ACCEPTED,
                data=data,
                created_at=created,
                reply_to=sample.reply_to,
                client_ip=sample.client_ip,
            )
            payload = json_text(dict(OutboxEvent.for_submission(evt_id, submission).payload))
            published = (created + timedelta(seconds=2)).isoformat()
            submissions.append(
                "\t".join(
                    (
                        sub_id,
                        common,
                        "accepted",
                        data_json,
                        "\\N",
                        _copy_text(sample.reply_to),
                        "0",
                        _copy_text(sample.client_ip),
                        stamp,
                    )
                )
            )
            events.append(
                "\t".join(
                    (
                        evt_id,
                        "submission.created",
                        sub_id,
                        common,
                        _copy_text(payload),
                        stamp,
                        published,
                        stamp,
                    )
                )
            )
            records.append(
                "\t".join((key_scope, f"bench-{sub_id}", data_fingerprint, sub_id, stamp))
            )
        made += n
        yield submissions, events, records


_COPIES = (
    "COPY submissions (submission_id, form_id, workspace_id, status, data, subject,"
    " reply_to, spam_score, client_ip, created_at) FROM STDIN",
    "COPY outbox (event_id, event_type, submission_id, form_id, workspace_id, payload,"
    " created_at, published_at, next_attempt_at) FROM STDIN",
    "COPY idempotency (scope, key, fingerprint, submission_id, created_at) FROM STDIN",
)


def prefill(url: str, target: Target, body: str, count: int) -> float:
    """Bulk-loads `count` rows into each of the three tables; returns the seconds taken."""
    started = time.perf_counter()
    until = datetime.now(UTC) - timedelta(hours=1)
    with psycopg.connect(url, autocommit=True) as conn:
        for batches in prefill_rows(target, body, count, until):
            with conn.transaction():
                for statement, lines in zip(_COPIES, batches, strict=True):
                    with conn.cursor().copy(statement) as copy:
                        copy.write("\n".join(lines) + "\n")
    return time.perf_counter() - started


# The storage ceiling: the service's own commit statement, as fast as PostgreSQL runs it


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
