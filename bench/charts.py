"""The dashboard's charts at scale (docs/dashboard.md#charts): a database of its own seeded
in SQL with 100,000 submissions in one form over 90 days (as many as `--listing-rows` if
fewer), 49 more forms (copies of the first) with 1,000 each, and dead deliveries; then
the latency of the one query each page makes, through the PostgreSQL store's own
`activity.daily_counts`:

- a form's page: that form, 90 days;
- the forms list: all 50 forms, 30 days.

Days are those of Europe/Paris (bins of an hour). The database is dropped at the end.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import psycopg

from bench.listing import EnvOf
from bench.options import Options
from bench.servers import console_script
from bench.storage import BenchDatabase, provision
from intake.adapters.postgres import open_postgres_store
from intake.domain.activity import DayGrid

TARGET_MS = 150.0  # p95 of either page's query
SAMPLES = 100
ROWS = 100_000  # in the large form; fewer when --listing-rows asks for fewer (--quick)
OTHER_FORMS = 49
OTHER_ROWS = 1_000
ZONE = ZoneInfo("Europe/Paris")

# The big form's rows, 77.76 s apart over 90 days, statuses 90/7/3 % accepted, spam,
# unverified; the other forms' over 30 days; then dead deliveries of one event in 50.
_SEED = """
    INSERT INTO submissions (submission_id, form_id, workspace_id, status, data, spam_score,
        created_at)
    SELECT 'sub_' || lpad(to_hex(n), 29, '0'), %(form_id)s, %(workspace_id)s,
        CASE WHEN n %% 100 < 90 THEN 'accepted' WHEN n %% 100 < 97 THEN 'spam'
            ELSE 'unverified' END,
        json_build_object('email', 'user' || n || '@example.com', 'message', 'Hello'), 0.5,
        now() - n * interval '77.76 seconds'
    FROM generate_series(1, %(rows)s::bigint) AS n
"""
_SEED_OTHER = """
    INSERT INTO submissions (submission_id, form_id, workspace_id, status, data, spam_score,
        created_at)
    SELECT 'sub_' || lpad(to_hex(%(offset)s + n), 29, '0'), %(form_id)s, %(workspace_id)s,
        'accepted', '{"email": "a@example.com"}', 0.1, now() - n * interval '2592 seconds'
    FROM generate_series(1, %(rows)s::bigint) AS n
"""
_SEED_DEAD = """
    WITH events AS (
        INSERT INTO outbox (event_id, event_type, submission_id, form_id, workspace_id,
            payload, created_at, published_at, next_attempt_at)
        SELECT 'evt_' || submission_id, 'submission.created', submission_id, form_id,
            workspace_id, '{}', created_at, created_at, created_at
        FROM submissions WHERE form_id = %(form_id)s AND status = 'accepted'
            AND right(submission_id, 2) = '32'
        RETURNING event_id, created_at
    )
    INSERT INTO deliveries (delivery_id, event_id, kind, destination_id, state, attempts,
        last_error, dead_at, created_at)
    SELECT 'dlv_' || event_id, event_id, 'webhook', 'wh_bench', 'dead', 8, 'HTTP 503',
        created_at, created_at
    FROM events
"""


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] charts: {message}", flush=True)


def copies(url: str, form_id: str) -> list[str]:
    """OTHER_FORMS copies of the form, each with an id and public key of its own."""
    made = [f"frm_bench{n:04d}" for n in range(OTHER_FORMS)]
    with psycopg.connect(url, autocommit=True) as conn:
        columns = [
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'forms'"
                " AND is_generated = 'NEVER' ORDER BY ordinal_position"
            )
        ]
        chosen = ", ".join(
            {"form_id": "%(copy)s", "public_form_key": "%(key)s"}.get(c, c) for c in columns
        )
        copy = (
            f"INSERT INTO forms ({', '.join(columns)}) "  # noqa: S608 - the table's own names
            f"SELECT {chosen} FROM forms WHERE form_id = %(form_id)s"
        )
        for copy_id in made:
            conn.execute(copy, {"copy": copy_id, "key": f"pk_{copy_id}", "form_id": form_id})
    return made


def seed(url: str, workspace_id: str, form_ids: list[str], rows: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        big, *others = form_ids
        conn.execute(_SEED, {"form_id": big, "workspace_id": workspace_id, "rows": rows})
        for index, form_id in enumerate(others, start=1):
            params = {"form_id": form_id, "workspace_id": workspace_id, "rows": OTHER_ROWS}
            conn.execute(_SEED_OTHER, {**params, "offset": rows + index * OTHER_ROWS})
        conn.execute(_SEED_DEAD, {"form_id": big})
        conn.execute("VACUUM (ANALYZE)")
        conn.execute("CHECKPOINT")


async def latencies(url: str, form_ids: list[str]) -> dict[str, dict[str, float]]:
    store = await open_postgres_store(url, require_schema=True)
    try:
        pages = {"form_page_90_days": (form_ids[:1], 90), "forms_list_30_days": (form_ids, 30)}
        figures = {}
        for name, (forms, days) in pages.items():
            grid = DayGrid.ending_today(datetime.now(UTC), days, ZONE)
            await store.activity.daily_counts(forms, grid)  # a warm connection and plan
            samples = []
            for _ in range(SAMPLES):
                started = time.perf_counter()
                await store.activity.daily_counts(forms, grid)
                samples.append((time.perf_counter() - started) * 1000)
            ordered = sorted(samples)
            p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
            figures[name] = {
                "p50_ms": round(statistics.median(ordered), 2),
                "p95_ms": round(p95, 2),
            }
            log(f"{name}: {figures[name]}")
        return figures
    finally:
        await store.close()


def run(
    admin_url: str, env_of: Callable[[str], Mapping[str, str]], rows: int = ROWS
) -> dict[str, Any]:
    database = BenchDatabase(admin_url)
    database.create()
    try:
        env = env_of(database.url)
        script = console_script("intake")
        target = provision(script, env)
        forms = [target.form_id, *copies(database.url, target.form_id)]
        log(f"seeding {rows:,} submissions in one form, {OTHER_ROWS:,} in {OTHER_FORMS} more")
        seed(database.url, target.workspace_id, forms, rows)
        results: dict[str, Any] = {"rows": rows, "forms": len(forms)}
        results.update(asyncio.run(latencies(database.url, forms)))
        return results
    finally:
        database.drop()


def measure(options: Options, env_of: EnvOf, results: dict[str, Any]) -> None:
    """The figures into results["charts"], unless `--listing-rows 0`."""
    if options.listing_rows > 0:
        rows = min(ROWS, options.listing_rows)
        results["charts"] = run(options.admin_url, lambda url: env_of(url, options.redis_url), rows)


def say_figures(results: Mapping[str, Any], say: Callable[[str], None]) -> bool:
    """Prints the figures, if measured; whether both met their target."""
    if "charts" not in results:
        return True
    charts = results["charts"]
    say(f"charts, {charts['rows']:,} submissions in one form of {charts['forms']} (PostgreSQL):")
    met = True
    for name in ("form_page_90_days", "forms_list_30_days"):
        p95 = charts[name]["p95_ms"]
        ok = p95 < TARGET_MS
        met = met and ok
        say(f"  {'ok  ' if ok else 'MISS'} {name} p95: {p95} ms (target < {TARGET_MS:g} ms)")
    say("")
    return met
