"""The listing, search and export of a large form (docs/api.md, "Listing and search"):
a database of its own seeded in SQL with `--listing-rows` submissions in one form
(1,000,000 by default), then

- page latency through the PostgreSQL store's own `page` (what the API's listing runs):
  the first page, a page deep behind a cursor, a status-filtered page;
- search latency (`q`): a selective text (a few rows) and a non-selective one (all rows);
- the export of every row as CSV over HTTP from a live `intake serve`, with the rise of
  the serving worker's memory while it streams.

The database is dropped at the end. Each figure is printed beside its target.
"""

from __future__ import annotations

import asyncio
import functools
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.deployed import installed
from bench.options import Options
from bench.servers import MemorySampler, Server, free_port
from bench.storage import BenchDatabase, intake, provision
from intake.adapters.postgres import open_postgres_store
from intake.domain.listing import SubmissionFilter, SubmissionQuery
from intake.domain.model import SubmissionStatus

PAGE_TARGET_MS = 50.0  # p99 of a page
SEARCH_TARGET_MS = 500.0  # a search, selective or not
EXPORT_MEMORY_TARGET_MB = 50.0
SAMPLES = 200  # timed calls per figure
SEARCH_SAMPLES = 20
SELECTIVE = "quixotic"  # one row in 100,000 holds it
SOME = "plan 99"  # about one row in 125 (plan 99 and 990 to 996 of every 997)
NON_SELECTIVE = "example.com"  # every row holds it
NO_MATCH = "zebra crossing"  # none

# One form's rows, made by the database itself: ids time-sortable (hex digits are
# Crockford base32 digits, so each is a well-formed submission id), 2.5 s apart,
# statuses 90/7/3 % accepted/spam/unverified, a selective word in one row of 100,000.
_SEED = """
    INSERT INTO submissions (
        submission_id, form_id, workspace_id, status, data, subject, reply_to, spam_score,
        client_ip, created_at
    )
    SELECT
        'sub_' || lpad(to_hex(n), 29, '0'), %(form_id)s, %(workspace_id)s,
        CASE WHEN n %% 100 < 90 THEN 'accepted' WHEN n %% 100 < 97 THEN 'spam'
            ELSE 'unverified' END,
        json_build_object(
            'name', 'Person ' || n,
            'email', 'user' || n || '@example.com',
            'topics', json_build_array('Pricing', 'Support'),
            'message', CASE WHEN n %% 100000 = 7 THEN 'A quixotic question about plans'
                ELSE 'Hello, I would like to know more about plan ' || (n %% 997) END
        ),
        NULL, 'user' || n || '@example.com', 0.5, '198.18.0.1',
        now() - interval '40 days' + n * interval '2.5 seconds'
    FROM generate_series(%(first)s::bigint, %(last)s::bigint) AS n
"""
SEED_BATCH = 250_000


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] listing: {message}", flush=True)


def seed(url: str, workspace_id: str, form_id: str, rows: int) -> float:
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        for first in range(1, rows + 1, SEED_BATCH):
            last = min(rows, first + SEED_BATCH - 1)
            params = {"form_id": form_id, "workspace_id": workspace_id}
            conn.execute(_SEED, {**params, "first": first, "last": last})
        conn.execute("VACUUM (ANALYZE) submissions")
        conn.execute("CHECKPOINT")
    return time.perf_counter() - started


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {"p50_ms": round(statistics.median(ordered), 2), "p99_ms": round(p99, 2)}


async def _timed(call: Callable[[], Awaitable[object]], count: int) -> dict[str, float]:
    await call()  # a warm connection and plan
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return _percentiles(samples)


async def latencies(url: str, form_id: str, rows: int) -> dict[str, dict[str, float]]:
    store = await open_postgres_store(url, require_schema=True)
    try:
        pages = store.submissions
        deep = "sub_" + format(rows // 10, "x").rjust(29, "0")  # 90 % of the way down
        spam = SubmissionFilter(frozenset({SubmissionStatus.SPAM}))
        queries = {
            "first_page": (SubmissionQuery(form_id), SAMPLES),
            "deep_cursor_page": (SubmissionQuery(form_id, after=deep), SAMPLES),
            "status_page": (SubmissionQuery(form_id, spam), SAMPLES),
            "search_selective": (
                SubmissionQuery(form_id, SubmissionFilter(text=SELECTIVE)),
                SEARCH_SAMPLES,
            ),
            "search_some": (
                SubmissionQuery(form_id, SubmissionFilter(text=SOME)),
                SEARCH_SAMPLES,
            ),
            "search_non_selective": (
                SubmissionQuery(form_id, SubmissionFilter(text=NON_SELECTIVE)),
                SEARCH_SAMPLES,
            ),
            "search_no_match": (
                SubmissionQuery(form_id, SubmissionFilter(text=NO_MATCH)),
                SEARCH_SAMPLES,
            ),
        }
        figures = {}
        for name, (query, count) in queries.items():
            figures[name] = await _timed(functools.partial(pages.page, query), count)
            log(f"{name}: {figures[name]}")
        return figures
    finally:
        await store.close()


def export(
    script: str,
    env: Mapping[str, str],
    form_id: str,
    api_key: str,
    *,
    workdir: Path,
    stack: ExitStack,
) -> dict[str, float]:
    """The CSV export of the whole form over HTTP; the worker's memory before and at its
    peak while streaming."""
    port = free_port()
    argv = [script, "serve", "--workers", "1", "--port", str(port)]
    server = Server("listing export", argv, env, port, workdir / "listing-export.log")
    stack.callback(server.stop)
    server.wait_ready()
    headers = {"Authorization": f"Bearer {api_key}"}
    path = f"/v1/forms/{form_id}/export?format=csv"
    with httpx.Client(base_url=server.base, headers=headers, timeout=600) as client:
        warm = client.get(f"/v1/forms/{form_id}/submissions?limit=200")
        warm.raise_for_status()
        sampler = MemorySampler(server, every=0.05)
        sampler.sample()
        before = sampler.peak_mb
        started = time.perf_counter()
        lines = 0
        with sampler, client.stream("GET", path) as answer:
            answer.raise_for_status()
            for chunk in answer.iter_bytes():
                lines += chunk.count(b"\n")  # a record ends in CRLF; no value holds a line break
        seconds = time.perf_counter() - started
    peak = sampler.peak_mb
    return {
        "rows": lines - 1,  # less the header
        "seconds": round(seconds, 1),
        "rss_before_mb": round(before, 1),
        "rss_peak_mb": round(peak, 1),
        "rss_rise_mb": round(peak - before, 1),
    }


def run(
    admin_url: str, env_of: Callable[[str], Mapping[str, str]], rows: int, workdir: Path
) -> dict[str, Any]:
    """`env_of`: the production environment of `intake serve` for a database URL."""
    results: dict[str, Any] = {"rows": rows}
    with ExitStack() as stack:
        database = BenchDatabase(admin_url)
        database.create()
        stack.callback(database.drop)
        install = installed()
        env = install.env(env_of(database.url))
        script = install.intake
        target = provision(script, env)
        key = intake(
            script, env, "key", "create", "--workspace", target.workspace_id, "--scope", "read"
        )
        log(f"seeding {rows:,} submissions in one form")
        results["seed_seconds"] = round(
            seed(database.url, target.workspace_id, target.form_id, rows), 1
        )
        log(f"seeded in {results['seed_seconds']} s")
        results.update(asyncio.run(latencies(database.url, target.form_id, rows)))
        log("export: every row as CSV over HTTP")
        results["export_csv"] = export(
            script, env, target.form_id, str(key["api_key"]), workdir=workdir, stack=stack
        )
        log(f"export: {results['export_csv']}")
    return results


def checks(results: Mapping[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(figure, measured, target, met) for each figure."""
    rows: list[tuple[str, str, str, bool]] = []
    for name in ("first_page", "deep_cursor_page", "status_page"):
        p99 = float(results[name]["p99_ms"])
        p50 = results[name]["p50_ms"]
        rows.append(
            (
                f"{name} p50/p99",
                f"{p50} / {p99} ms",
                f"p99 < {PAGE_TARGET_MS:.0f} ms",
                p99 < PAGE_TARGET_MS,
            )
        )
    for name in ("search_selective", "search_some", "search_non_selective", "search_no_match"):
        p99 = float(results[name]["p99_ms"])
        p50 = results[name]["p50_ms"]
        rows.append(
            (
                f"{name} p50/p99",
                f"{p50} / {p99} ms",
                f"< {SEARCH_TARGET_MS:.0f} ms",
                p99 < SEARCH_TARGET_MS,
            )
        )
    exported = results["export_csv"]
    rise = float(exported["rss_rise_mb"])
    rows.append(
        (
            f"export of {exported['rows']:,} rows (CSV, {exported['seconds']} s): memory rise",
            f"{rise} MB",
            f"< {EXPORT_MEMORY_TARGET_MB:.0f} MB",
            rise < EXPORT_MEMORY_TARGET_MB,
        )
    )
    return rows


def report(results: Mapping[str, Any]) -> str:
    lines = [f"listing and search, {results['rows']:,} submissions in one form (PostgreSQL):"]
    for figure, measured, target, met in checks(results):
        lines.append(f"  {'ok  ' if met else 'MISS'} {figure}: {measured} (target {target})")
    return "\n".join(lines)


EnvOf = Callable[[str, str], Mapping[str, str]]  # production_env(database_url, redis_url)


def measure(options: Options, env_of: EnvOf, workdir: Path, results: dict[str, Any]) -> None:
    """The figures into results["listing"], unless `--listing-rows 0`."""
    if options.listing_rows > 0:
        results["listing"] = run(
            options.postgres,
            lambda url: env_of(url, options.redis),
            options.listing_rows,
            workdir,
        )


def say_figures(results: Mapping[str, Any], say: Callable[[str], None]) -> bool:
    """Prints the figures, if measured; whether every target was met."""
    if "listing" not in results:
        return True
    say(report(results["listing"]))
    say("")
    return all(met for *_, met in checks(results["listing"]))


def alone(options: Options, env_of: EnvOf, say: Callable[[str], None]) -> int:
    """`--listing-only`: these figures and no other."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="intake-bench-") as temp:
        measure(options, env_of, Path(temp), results)
    options.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if say_figures(results, say) else 1
