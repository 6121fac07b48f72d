"""The bench's own machinery: what it reads out of wrk, pgbench and py-spy, how it holds
figures to their targets, and one short run of the whole thing against real servers."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
import redis
from bench import (
    client_size,
    dashboard,
    fixed_rate,
    prefill,
    profiling,
    report,
    storage,
    storage_ceiling,
    targets,
    wrk,
)
from bench.figures import figures_of
from bench.options import parse

from intake.domain import ids
from tests.conftest import unavailable
from tests.contract.conftest import admin_url

ROOT = Path(__file__).resolve().parents[2]
BENCH_TIMEOUT = 600  # seconds for the whole quick run
# The large forms of the quick run, smaller than --quick's own: what is checked is that
# every figure is measured and read back, which the fewest rows the pages hold shows.
LISTING_ROWS = 2_000
DASHBOARD_ROWS = 1_000  # the least the bench takes

WRK_OUTPUT = """\
Running 30s test @ http://127.0.0.1:41234
  2 threads and 32 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    12.10ms    3.20ms  80.00ms   90.00%
    Req/Sec     1.32k   100.00     1.50k    70.00%
  79200 requests in 30.00s, 20.00MB read
  Non-2xx or 3xx responses: 12
Requests/sec:   2640.00
Transfer/sec:    682.67KB
BENCH_JSON {"requests":79200,"duration_us":30000000,"bytes":20971520,\
"errors":{"connect":0,"read":3,"write":0,"status":12,"timeout":2},\
"latency_us":{"mean":12100.0,"stdev":3200.0,"max":80000,"p50":11500,"p90":15000,\
"p99":24800,"p999":61000},"statuses":{"201":79180,"429":8,"503":4,"303":8}}
"""


def test_wrk_output_is_read_from_the_scripts_json_line() -> None:
    result = wrk.parse_output(WRK_OUTPUT)

    assert result.requests == 79200
    assert result.duration_s == 30.0
    assert result.statuses == {201: 79180, 429: 8, 503: 4, 303: 8}
    assert result.latency_ms["p50"] == 11.5
    assert result.latency_ms["p99"] == 24.8
    assert result.latency_ms["p999"] == 61.0


def test_every_answer_but_a_201_and_every_socket_error_counts_as_an_error() -> None:
    result = wrk.parse_output(WRK_OUTPUT)

    # 20 answers that were not 201 (a 303 too), 3 read errors and 2 timeouts; wrk's own
    # `status` count is of the same answers, so it is not added twice.
    assert result.accepted == 79180
    assert result.errors == 20 + 3 + 2
    assert result.accepted_per_s == pytest.approx(79180 / 30)


def test_runs_combine_into_sums_and_median_latencies() -> None:
    one = wrk.parse_output(WRK_OUTPUT)
    slow = wrk.LoadResult(
        requests=100,
        duration_s=10.0,
        statuses={201: 99, 503: 1},
        socket_errors={"read": 1},
        latency_ms={"p50": 100.0, "p99": 900.0, "max": 2000.0},
    )

    combined = wrk.combine([one, one, slow])

    assert combined.requests == 2 * 79200 + 100
    assert combined.duration_s == 70.0
    assert combined.statuses[201] == 2 * 79180 + 99
    assert combined.statuses[503] == 2 * 4 + 1
    assert combined.socket_errors["read"] == 2 * 3 + 1
    # One disturbed run does not stand for the others; the worst moment is kept as such.
    assert combined.latency_ms["p99"] == 24.8
    assert combined.latency_ms["max"] == 2000.0


def test_wrk_output_without_the_json_line_is_an_error_naming_it() -> None:
    with pytest.raises(wrk.WrkError, match="BENCH_JSON"):
        wrk.parse_output("unable to connect to 127.0.0.1:1 Connection refused\n")


def test_the_wrk_command_passes_the_form_path_and_a_fresh_address_offset() -> None:
    load = wrk.Load("/usr/bin/wrk", Path("/tmp/submit.lua"), connections=32, threads=2)

    command = load.command("http://127.0.0.1:9000", "/f/abc", 30, offset=wrk.IP_SPAN + 5)

    assert command[:8] == [
        "/usr/bin/wrk", "-t2", "-c32", "-d30s", "--timeout=10s", "-s", "/tmp/submit.lua",
        "http://127.0.0.1:9000",
    ]  # fmt: skip
    assert command[8:] == ["--", "/f/abc", "5", str(wrk.IP_SPAN), "2", wrk.FORM_BODY]


def _phase(
    per_s: float,
    p99: float = 10.0,
    errors: int = 0,
    rss: float = 80.0,
    p50: float = 5.0,
    *,
    cpu: targets.ProcessCpu | None = None,
) -> targets.Phase:
    return targets.Phase(
        accepted_per_s=per_s, p50_ms=p50, p99_ms=p99, errors=errors, peak_rss_mb=rss, cpu=cpu
    )


def _cpu(worker: float, postgres: float, redis: float = 0.125) -> targets.ProcessCpu:
    return targets.ProcessCpu(worker=worker, postgres=postgres, redis=redis, machine=2.0)


def _fixed_rate(
    one: targets.ProcessCpu, two: targets.ProcessCpu, errors: int = 0
) -> targets.FixedRate:
    return targets.FixedRate(
        rate=600, one=one, two=two, one_per_s=600, two_per_s=599, errors=errors
    )


FIXED_RATE = "two workers' CPU per submission vs one worker's, same fixed rate"
SATURATED = "two workers' CPU per submission vs one worker's, saturated"
SERVING = targets.Ceiling(4000, "asyncio + h11")
FASTEST = targets.Ceiling(8000, "uvloop + httptools", cpu_ms=0.1)


def _statuses(checks: list[targets.Check]) -> dict[str, targets.Status]:
    return {check.name: check.status for check in checks}


def test_a_run_meeting_every_target_passes_them_all() -> None:
    # Each figure exactly at its bound: 15% of the fastest stack's 8000/s and 30% of the
    # serving stack's 4000/s are both 1200/s.
    figures = targets.Figures(
        serving=SERVING,
        fastest=FASTEST,
        storage_per_s=3000,
        # Worker, PostgreSQL and Redis: 0.5 ms, 5 times the ceiling's 0.1 ms; PostgreSQL
        # half the compared tree's; two workers 1.1 times one's.
        production=_phase(1200, p99=39.9, p50=14.9, rss=119.9, cpu=_cpu(0.25, 0.125)),
        production_submissions=100_000,
        baseline=_phase(1000, cpu=_cpu(0.5, 0.25)),
        baseline_revision="abc1234",
        two_workers=_phase(1920, cpu=_cpu(0.3, 0.125)),
        fixed_rate=_fixed_rate(one=_cpu(0.25, 0.125), two=_cpu(0.3, 0.125)),
        prefilled=_phase(1080),
        stored_when_prefilled=1_000_000,
        embedded=_phase(800, rss=119.9),
        round_trips=targets.RoundTrips(postgres=1.0, redis=1.0),
        keepalive_p50_ms=4.9,
        cli_startup_s=0.29,
        client_gzip_bytes=5120,
    )

    checks = targets.evaluate(figures)
    statuses = _statuses(checks)

    # The storage ceiling and the round trips are shown side by side, held to no bound;
    # so is the two workers' CPU at saturation.
    assert statuses.pop("storage ceiling and production round trips") is targets.Status.REPORTED
    assert statuses.pop(SATURATED) is targets.Status.REPORTED
    assert set(statuses.values()) == {targets.Status.PASS}
    assert not targets.failed(checks)


def test_each_target_fails_just_past_its_bound() -> None:
    figures = targets.Figures(
        serving=SERVING,
        fastest=FASTEST,
        storage_per_s=3000,
        production=_phase(1199, p99=40.0, p50=15.0, errors=1, rss=120.0, cpu=_cpu(0.25, 0.126)),
        production_submissions=100_000,
        baseline=_phase(1000, cpu=_cpu(0.5, 0.25)),
        two_workers=_phase(1918, cpu=_cpu(0.3, 0.2)),
        fixed_rate=_fixed_rate(one=_cpu(0.25, 0.125), two=_cpu(0.3, 0.126), errors=1),
        prefilled=_phase(1079),
        stored_when_prefilled=1_000_000,
        embedded=_phase(799, errors=2, rss=120.0),
        round_trips=targets.RoundTrips(postgres=1.0, redis=1.0),
        keepalive_p50_ms=5.0,
        cli_startup_s=0.3,
        client_gzip_bytes=5121,
    )

    statuses = _statuses(targets.evaluate(figures))

    assert statuses == {
        "production vs fastest-stack ceiling": targets.Status.FAIL,
        "production vs serving-stack ceiling": targets.Status.FAIL,
        "production p99 latency": targets.Status.FAIL,
        "production p50 latency": targets.Status.FAIL,
        "production errors (not 201)": targets.Status.FAIL,
        "production peak RSS per worker": targets.Status.FAIL,
        "PostgreSQL CPU per submission vs the compared tree": targets.Status.FAIL,
        "worker+PostgreSQL+Redis CPU per submission vs ceiling's per request": (
            targets.Status.FAIL
        ),
        FIXED_RATE: targets.Status.FAIL,
        "fixed-rate errors (not 201)": targets.Status.FAIL,
        SATURATED: targets.Status.REPORTED,
        "two workers errors (not 201)": targets.Status.PASS,
        "throughput with the store prefilled": targets.Status.FAIL,
        "prefilled errors (not 201)": targets.Status.PASS,
        "embedded vs fastest-stack ceiling": targets.Status.FAIL,
        "embedded peak RSS": targets.Status.FAIL,
        "embedded errors (not 201)": targets.Status.FAIL,
        "storage ceiling and production round trips": targets.Status.REPORTED,
        "keep-alive p50, two workers, one connection": targets.Status.FAIL,
        "intake form show on SQLite, wall time p50": targets.Status.FAIL,
        "intake.js gzipped (unminified)": targets.Status.FAIL,
    }


def test_targets_a_short_run_cannot_speak_for_are_incomplete_not_passed() -> None:
    figures = targets.Figures(
        serving=SERVING,
        storage_per_s=None,
        production=_phase(2000, rss=500.0),
        production_submissions=99_999,
        prefilled=_phase(100),
        stored_when_prefilled=999_999,
        embedded=None,
    )

    checks = targets.evaluate(figures)
    statuses = _statuses(checks)

    for incomplete in (
        "production vs fastest-stack ceiling",
        "production peak RSS per worker",
        "PostgreSQL CPU per submission vs the compared tree",
        "worker+PostgreSQL+Redis CPU per submission vs ceiling's per request",
        FIXED_RATE,
        SATURATED,
        "throughput with the store prefilled",
        "embedded vs fastest-stack ceiling",
        "embedded peak RSS",
        "storage ceiling and production round trips",
        "keep-alive p50, two workers, one connection",
        "intake form show on SQLite, wall time p50",
        "intake.js gzipped (unminified)",
    ):
        assert statuses[incomplete] is targets.Status.INCOMPLETE, incomplete
    assert statuses["production vs serving-stack ceiling"] is targets.Status.PASS
    assert not targets.failed(checks)


def test_the_shipped_client_is_within_its_budget() -> None:
    measured = client_size.measure()

    shipped = client_size.SHIPPED.read_bytes()
    assert measured["bytes"] == len(shipped)
    assert measured["gzip_bytes"] == len(gzip.compress(shipped, compresslevel=9, mtime=0))
    figures = figures_of_client(measured)
    (check,) = [c for c in targets.evaluate(figures) if c.name.startswith("intake.js")]
    assert check.status is targets.Status.PASS, check


def figures_of_client(measured: dict[str, object]) -> targets.Figures:
    return targets.Figures(
        serving=SERVING,
        storage_per_s=None,
        production=_phase(1200),
        production_submissions=0,
        client_gzip_bytes=client_size.gzip_bytes_of({"client_size": measured}),
    )


def test_the_report_shows_each_figure_beside_its_target_and_status() -> None:
    figures = targets.Figures(
        serving=targets.Ceiling(4000, "asyncio + h11", cpu_ms=0.163),
        fastest=FASTEST,
        storage_per_s=2000,
        production=_phase(1200, p99=25.0, cpu=_cpu(0.25, 0.125)),
        production_submissions=100_000,
        two_workers=_phase(1800, cpu=_cpu(0.5, 0.25)),
        fixed_rate=_fixed_rate(one=_cpu(0.3, 0.15), two=_cpu(0.35, 0.175)),
        embedded=_phase(500),
        round_trips=targets.RoundTrips(postgres=1.004, redis=1.0),
    )

    checks = targets.evaluate(figures)
    text = report.report(figures, checks)

    lines = text.splitlines()
    assert lines[:3] == [
        "framework ceiling: fastest stack (uvloop + httptools) 8000 submissions/s,"
        " 0.10 ms of worker CPU each",
        "framework ceiling: serving stack (asyncio + h11) 4000 submissions/s,"
        " 0.16 ms of worker CPU each",
        "storage ceiling 2000 commits/s (pgbench, one commit statement a round trip);"
        " production's round trips per accepted submission: 1.00 to PostgreSQL"
        " (transactions), 1.00 to Redis (requests read)",
    ]
    assert "vs fastest-stack ceiling (8000/s)" in text
    assert "vs serving-stack ceiling (4000/s)" in text
    assert "vs storage ceiling (2000/s)" in text
    assert "production, 2 workers" in lines[4]

    def row(name: str) -> str:
        return next(line for line in lines if line.startswith(name))

    fastest = row("production vs fastest-stack")
    assert "1200/s = 15% of 8000/s" in fastest
    assert ">= 15%" in fastest
    assert "PASS" in fastest
    assert "uvloop + httptools" in fastest
    serving = row("production vs serving-stack")
    assert "1200/s = 30% of 4000/s" in serving
    assert ">= 30%" in serving
    # The target compares one worker and two at the same rate below saturation; the
    # saturated figure is shown beside it.
    scaling = row(FIXED_RATE)
    assert "0.650 ms / 0.575 ms = 1.13x" in scaling
    assert "<= 1.10x" in scaling
    assert "FAIL" in scaling
    assert "600/s offered: 599/s and 600/s accepted" in scaling
    saturated = row(SATURATED)
    assert "0.875 ms / 0.500 ms = 1.75x" in saturated
    assert "REPORTED" in saturated
    assert "1800/s against 1200/s" in saturated
    assert "0.125 ms" in row("CPU per accepted: PostgreSQL")
    # Each process's CPU at the fixed rate, one worker beside two.
    assert "production at 600/s offered" in text
    fixed_rows = [line for line in lines if line.startswith("CPU per accepted: PostgreSQL")]
    assert "0.150 ms" in fixed_rows[1]
    assert "0.175 ms" in fixed_rows[1]
    embedded = row("embedded vs fastest-stack")
    assert "500/s = 6% of 8000/s" in embedded
    assert "FAIL" in embedded
    assert "REPORTED" in row("storage ceiling and production round trips")
    # The results document carries the compared number beside each text.
    documents = {check.name: check.as_json() for check in checks}
    assert documents[SATURATED]["value"] == 1.75
    assert documents[FIXED_RATE]["value"] == pytest.approx(0.65 / 0.575, abs=1e-4)
    assert documents["production p50 latency"]["value"] == 5.0
    assert documents["production vs fastest-stack ceiling"]["target"] == ">= 15%"


def test_figures_are_read_back_from_the_results_document() -> None:
    phase = {
        **wrk.parse_output(WRK_OUTPUT).as_json(),
        "peak_rss_mb": 90.5,
    }
    cpu = {"worker": 0.6, "postgres": 0.3, "redis": 0.05, "machine": 2.5}
    results = {
        "framework_ceiling": {**phase, "accepted_per_s": 5000.0, "stack": "asyncio + h11"},
        "framework_ceiling_fastest": {
            **phase,
            "accepted_per_s": 11000.0,
            "stack": "uvloop + httptools",
        },
        "storage_ceiling": {"commits_per_s": 3500.0},
        "production": phase,
        "production_2_workers": {**phase, "accepted_per_s": 4000.0},
        "production_submissions": 123_456,
        "production_prefilled": {**phase, "stored": 1_123_456},
        "round_trips": {"postgres_per_accepted": 1.01, "redis_per_accepted": 2.0},
        "keepalive": {"requests": 500, "latency_ms": {"p50": 0.41, "p99": 1.9}},
        "fixed_rate": {
            "rate": 700.0,
            "production": {"accepted_per_s": 699.0, "errors": 0, "cpu_ms_per_accepted": cpu},
            "production_2_workers": {
                "accepted_per_s": 698.0,
                "errors": 1,
                "cpu_ms_per_accepted": {**cpu, "worker": 0.7},
            },
        },
    }

    figures = figures_of(json.loads(json.dumps(results)))

    assert figures.serving == targets.Ceiling(5000.0, "asyncio + h11")
    assert figures.fastest == targets.Ceiling(11000.0, "uvloop + httptools", cpu_ms=None)
    assert figures.storage_per_s == 3500.0
    assert figures.production.p99_ms == 24.8
    assert figures.production.errors == 25
    assert figures.production.peak_rss_mb == 90.5
    assert figures.two_workers is not None
    assert figures.two_workers.accepted_per_s == 4000.0
    assert figures.stored_when_prefilled == 1_123_456
    assert figures.round_trips == targets.RoundTrips(postgres=1.01, redis=2.0)
    assert figures.embedded is None
    assert figures.keepalive_p50_ms == 0.41
    assert figures.fixed_rate == targets.FixedRate(
        rate=700.0,
        one=targets.ProcessCpu(worker=0.6, postgres=0.3, redis=0.05, machine=2.5),
        two=targets.ProcessCpu(worker=0.7, postgres=0.3, redis=0.05, machine=2.5),
        one_per_s=699.0,
        two_per_s=698.0,
        errors=1,
    )


PGBENCH_OUTPUT = """\
transaction type: commit.sql
scaling factor: 1
query mode: prepared
number of clients: 32
number of threads: 2
maximum number of tries: 1
duration: 30 s
number of transactions actually processed: 90000
number of failed transactions: 0 (0.000%)
latency average = 10.667 ms
initial connection time = 25.000 ms
tps = 3000.123456 (without initial connection time)
"""


def test_pgbench_output_gives_the_commit_rate() -> None:
    result = storage_ceiling.parse_pgbench(PGBENCH_OUTPUT, [1.0, 2.0, 3.0, 100.0], clients=32)

    assert result.commits_per_s == pytest.approx(3000.123456)
    assert result.transactions == 90000
    assert result.failed == 0
    assert result.latency_ms["p50"] == 3.0
    assert result.latency_ms["max"] == 100.0


def test_the_pgbench_script_runs_the_services_own_commit_statement() -> None:
    target = storage.Target("ws_1", "frm_1", "key1")

    script = storage_ceiling.pgbench_script(storage_ceiling.commit_arguments(target, wrk.FORM_BODY))

    assert script.startswith("\\set r random(")
    statement = script.splitlines()[1]
    assert "FROM intake_commit(" in statement
    assert "p_form_id => E'frm_1'::text" in statement
    assert "p_idem_scope => NULL::text" in statement
    assert statement.endswith(";")
    # pgbench would take `:30` in a quoted time for a variable: no colon is left but
    # the named-argument arrows, the casts and the two per-transaction variables.
    for colon in (i for i, ch in enumerate(statement) if ch == ":"):
        around = statement[colon - 1 : colon + 2]
        assert "::" in around or statement[colon + 1 :].startswith(("client_id", "r)"))


def test_a_pgbench_literal_has_no_colon_and_keeps_quotes_and_backslashes() -> None:
    literal = storage_ceiling.pgbench_literal("it's 12:30 \\ ok")

    assert literal == "E'it''s 12\\x3a30 \\\\ ok'"
    assert storage_ceiling.pgbench_literal(None) == "NULL"
    assert storage_ceiling.pgbench_literal(20) == "20"


def test_prefill_ids_are_the_services_id_format() -> None:
    ms = int(datetime(2026, 5, 1, tzinfo=UTC).timestamp() * 1000)
    for random in (bytes(12), b"\xff" * 12, os.urandom(12)):
        assert prefill.fast_time_sorted_id("sub", ms, random) == ids.submission_id(ms, random)
    for random in (bytes(16), b"\xff" * 16, os.urandom(16)):
        fast = prefill.fast_time_sorted_id("evt", ms, random)
        assert fast == ids.time_sorted_id("evt", ms, random)


def test_prefill_rows_are_time_ordered_and_spread_over_the_month_before() -> None:
    target = storage.Target("ws_1", "frm_1", "key1")
    until = datetime(2026, 5, 31, tzinfo=UTC)

    batches = list(prefill.prefill_rows(target, wrk.FORM_BODY, 3, until))

    assert len(batches) == 1
    submissions, events, records = batches[0]
    sub_ids = [line.split("\t")[0] for line in submissions]
    assert sub_ids == sorted(sub_ids)
    assert all(ids.is_submission_id(sub_id) for sub_id in sub_ids)
    columns = submissions[0].split("\t")
    assert columns[1:4] == ["frm_1", "ws_1", "accepted"]
    assert json.loads(columns[4])["email"] == "ada@example.com"
    assert datetime.fromisoformat(columns[-1]) < until
    assert [line.split("\t")[2] for line in events] == sub_ids
    assert [line.split("\t")[3] for line in records] == sub_ids


PY_SPY_RAW = """\
<module> (intake:6);run (uvicorn/main.py:1);SubmissionPipeline.submit (intake/service/pipeline.py:1);Database.fetch_one (intake/adapters/postgres/database.py:1);BaseCursor._send_query_prepared (psycopg/_cursor_base.py:602) 50
<module> (intake:6);run (uvicorn/main.py:1);SubmissionPipeline.submit (intake/service/pipeline.py:1);score (intake/domain/scoring.py:122) 20
<module> (intake:6);run (uvicorn/main.py:1);RequestResponseCycle.send (uvicorn/protocols/http/httptools_impl.py:524) 25
<module> (intake:6);Thread.run (threading.py:1) 5
"""  # noqa: E501


def test_profile_samples_go_to_the_innermost_component_on_their_stack() -> None:
    shares = {share.component: share for share in profiling.summarize(PY_SPY_RAW)}

    assert shares["psycopg (PostgreSQL driver)"].samples == 50
    assert shares["psycopg (PostgreSQL driver)"].percent == 50.0
    assert shares["intake: scoring"].samples == 20
    assert shares["uvicorn / HTTP parsing"].samples == 25
    assert shares[profiling.OTHER].samples == 5
    assert sum(share.samples for share in shares.values()) == 100


def test_quick_defaults_are_short_and_full_defaults_meet_the_targets_preconditions() -> None:
    quick = parse(["--quick"])
    full = parse([])

    assert quick.duration < full.duration
    assert quick.prefill < full.prefill
    assert full.prefill >= targets.PREFILL_ROWS
    assert full.production_submissions >= targets.RSS_AFTER_SUBMISSIONS
    assert full.connections == 32
    assert full.threads == 2
    assert parse(["--quick", "--prefill", "0"]).prefill == 0
    assert (quick.listing_rows, full.listing_rows) == (20_000, 1_000_000)
    assert parse(["--listing-rows", "0"]).listing_rows == 0
    assert (quick.dashboard_rows, full.dashboard_rows) == (5_000, 100_000)
    assert parse(["--dashboard-rows", "0"]).dashboard_rows == 0
    with pytest.raises(SystemExit):  # too few for the pages to hold what they are checked for
        parse(["--dashboard-rows", "999"])


def _postgres() -> str:
    """The suite's PostgreSQL server (INTAKE_TEST_DATABASE_URL), on which the bench makes
    and drops databases of its own."""
    admin = admin_url()
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as error:
        unavailable(f"PostgreSQL is not reachable for the bench: {error}")
    return admin


def _bench_databases(admin: str) -> set[str]:
    with psycopg.connect(admin, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'intake_bench_%'"
        ).fetchall()
    return {str(row[0]) for row in rows}


@pytest.mark.slow
@pytest.mark.services
@pytest.mark.timeout(BENCH_TIMEOUT + 120)
def test_a_quick_run_measures_every_phase_and_leaves_nothing_behind(
    tmp_path: Path, redis_url: str
) -> None:
    admin = _postgres()
    output = tmp_path / "results.json"
    done = subprocess.run(
        [
            sys.executable, "-m", "bench", "--quick", "--duration", "2", "--warmup", "1",
            "--prefill", "500", "--production-submissions", "300",
            "--listing-rows", str(LISTING_ROWS), "--dashboard-rows", str(DASHBOARD_ROWS),
            "--connections", "8", "--output", str(output),
            "--database-url", admin, "--redis-url", redis_url,
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=BENCH_TIMEOUT, check=False,
    )  # fmt: skip

    # Whatever the figures, a run that completes exits 0 or 1 (a target failed).
    assert done.returncode in (0, 1), done.stdout + done.stderr
    results = json.loads(output.read_text())
    phases = (
        "framework_ceiling", "framework_ceiling_fastest", "production",
        "production_2_workers", "production_prefilled", "embedded",
    )  # fmt: skip
    for phase in phases:
        assert results[phase]["accepted"] > 0, phase
        assert results[phase]["errors"] == 0, (phase, results[phase]["statuses"])
        assert results[phase]["peak_rss_mb"] > 0, phase
    # The fastest-stack ceiling ran on uvloop and httptools; the serving-stack one on
    # what the production worker runs on.
    assert results["framework_ceiling_fastest"]["stack"] == "uvloop + httptools"
    assert results["framework_ceiling"]["stack"] == results["production"]["stack"]
    assert results["production_2_workers"]["stack"] == results["production"]["stack"]
    trips = results["round_trips"]
    assert trips["accepted"] > 0
    assert trips["postgres_per_accepted"] > 0
    assert trips["redis_per_accepted"] > 0
    assert results["storage_ceiling"]["transactions"] > 0
    assert results["storage_ceiling"]["failed"] == 0
    assert results["production_submissions"] >= 300
    assert results["production_prefilled"]["stored"] == 500
    # One worker and two offered the same rate, below saturation, every answer a 201.
    fixed = results["fixed_rate"]
    assert fixed["rate"] > 0
    for key in ("production", "production_2_workers"):
        assert fixed[key]["accepted"] > 0, key
        assert fixed[key]["errors"] == 0, key
        assert fixed[key]["cpu_ms_per_accepted"]["worker"] > 0, key
    assert results["keepalive"]["latency_ms"]["p50"] > 0
    # Content scoring flagged nothing: every stored submission used the quota.
    assert set(results["production_statuses"]) == {"accepted"}
    assert {check["name"] for check in results["targets"]} >= {
        "production vs fastest-stack ceiling",
        "production vs serving-stack ceiling",
        "production p99 latency",
        "production p50 latency",
        "PostgreSQL CPU per submission vs the compared tree",
        "worker+PostgreSQL+Redis CPU per submission vs ceiling's per request",
        FIXED_RATE,
        SATURATED,
        "embedded vs fastest-stack ceiling",
        "embedded peak RSS",
        "storage ceiling and production round trips",
        "keep-alive p50, two workers, one connection",
    }
    assert "production p99 latency" in done.stdout
    # The listing figures: every seeded row came back through the export.
    assert results["listing"]["export_csv"]["rows"] == results["listing"]["rows"]
    assert "listing and search" in done.stdout
    # The dashboard's pages, each fetched over HTTP and found to show what it should.
    assert results["dashboard"]["rows"] == DASHBOARD_ROWS
    for page in dashboard.pages("", ""):
        assert results["dashboard"][page]["p95_ms"] > 0, page
    assert "dashboard pages over HTTP" in done.stdout
    # The run's databases are dropped and its rate-limit windows deleted.
    made = results["databases"].values()
    assert {made["database"] for made in made}.isdisjoint(_bench_databases(admin))
    with redis.Redis.from_url(redis_url) as client:
        for form_id in (made["form_id"] for made in made):
            assert not client.keys(f"intake:rl:*{form_id}*")


def test_the_fixed_rate_load_sends_its_rate_from_fresh_addresses() -> None:
    addresses: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                addresses.append(head.split(b"X-Forwarded-For: ")[1].split(b"\r\n")[0])
                writer.write(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}")
        writer.close()

    async def drive() -> fixed_rate.RateResult:
        server = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            return await fixed_rate.drive(
                port, "/f/abc", 200.0, seconds=0.5, connections=4, first=wrk.IP_SPAN - 50
            )

    result = asyncio.run(drive())

    assert result.sent == result.accepted == 100
    assert result.errors == 0
    # On its schedule: the last request goes 0.495 s after the first, not at once.
    assert 0.45 <= result.duration_s < 2.0
    assert len(set(addresses)) == 100
    assert b"198.19.255.255" in addresses  # the span wraps around to its start
    assert b"198.18.0.0" in addresses
