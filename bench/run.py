"""One run of the bench (docs/performance.md), on a PostgreSQL cluster and a Redis of
its own unless others are named (bench/services.py):

1. PostgreSQL databases of the run's own: two empty (for one worker and for two), one
   bulk-loaded with stored submissions (`--prefill`), one for the compared tree
   (`--compare-ref`), each with a workspace and a form made by `intake`;
2. seven servers side by side: the framework ceiling (a bare Starlette app under the
   settings of `intake serve`) on the event loop and HTTP parser `intake serve` runs on
   and on the fastest (uvloop + httptools), production with one worker and with two on
   the empty stores, production on the prefilled store, production as the compared
   tree has it, and the embedded default (SQLite, in-process limiter);
3. the measurement: wrk against each server in turn, in several rounds, so that other
   work on a shared machine weighs on all of them alike and the ratios hold; the CPU
   each server's processes and its stores' spent (bench/cpu_meter.py), and where
   PostgreSQL's time went (bench/pg_statements.py);
4. the round trips production makes to PostgreSQL and Redis per accepted submission;
5. more production load until enough submissions went through to read its memory;
6. optionally a py-spy profile of the production worker under the same load;
7. the storage ceiling: pgbench running the service's own commit statement.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import (
    client_size,
    dashboard,
    embedded,
    fixed_rate,
    keepalive,
    listing,
    machine,
    pg_statements,
    round_trips,
)
from bench.baseline import Baseline, checkout
from bench.cpu_meter import CpuMeter
from bench.deployed import Install, development, installed
from bench.environments import (
    FORM_RATE,
    ROOT,
    ceiling_env,
    embedded_env,
    production_env,
)
from bench.figures import figures_of
from bench.options import Options
from bench.prefill import prefill as bulk_prefill
from bench.report import report
from bench.servers import MemorySampler, Server, ServerError, console_script, free_port, stack_name
from bench.services import started
from bench.storage import BenchDatabase, Target, check_redis, clear_rate_limits, provision
from bench.storage_ceiling import storage_ceiling as run_storage_ceiling
from bench.subjects import Driver, Subject, log, measure, profile, soak, warm_up
from bench.targets import evaluate, failed
from bench.wrk import FORM_BODY, Load, combine, find_wrk, write_script

__all__ = ["ceiling_env", "log", "run"]

# Other processes using more than this many cores on average during the measurement
# make the report say that the machine was busy.
BUSY_CORES = 0.25
# The fastest stack uvicorn serves on: the framework ceiling production is held to.
FASTEST_STACK = {"loop": "uvloop", "http": "httptools"}
TWO_WORKERS = 2
# The servers whose statements are read from pg_stat_statements.
STATEMENTS_OF = ("production", "production_baseline")


def check_fastest_stack() -> None:
    missing = [name for name in FASTEST_STACK.values() if importlib.util.find_spec(name) is None]
    if missing:
        raise ServerError(
            f"{' and '.join(missing)} not installed, which the fastest-stack ceiling runs on:"
            " run make install"
        )


class Bench:
    """The run's resources, opened in order and closed in reverse by one ExitStack."""

    def __init__(
        self, options: Options, stack: ExitStack, workdir: Path, install: Install | None = None
    ) -> None:
        """`install`: the `intake` the run measures; the development install's unless
        given (the quick tools, which run beside the sources being changed)."""
        self.options = options
        self.stack = stack
        self.workdir = workdir
        self.install = install or development(console_script("intake"))
        self.intake = self.install.intake

    def database(
        self, results: dict[str, Any], key: str, code: Baseline | None = None
    ) -> tuple[BenchDatabase, Target]:
        """A new database, migrated and provisioned by this tree's `intake` or `code`'s."""
        database = BenchDatabase(self.options.postgres)
        database.create()
        self.stack.callback(database.drop)
        env = self.install.env(production_env(database.url, self.options.redis))
        target = provision(self.intake, code.env(env) if code else env)
        self.stack.callback(clear_rate_limits, self.options.redis, target.form_id)
        results.setdefault("databases", {})[key] = {
            "database": database.name,
            "form_id": target.form_id,
        }
        return database, target

    def one_store(
        self, *, embedded: bool, workers: int = 1
    ) -> tuple[dict[str, str], Target, str | None]:
        """The environment, form and database of one server measured alone (the quick
        tools): a fresh SQLite file, or a database of its own beside the bench's Redis."""
        if embedded:
            env = self.install.env(embedded_env(self.workdir / "intake.db"))
            return env, provision(self.intake, env), None
        check_redis(self.options.redis)
        database, target = self.database({}, "production")
        env = self.install.env(production_env(database.url, self.options.redis, workers))
        return env, target, database.name

    def start(
        self, key: str, label: str, argv: list[str], env: Mapping[str, str], path: str
    ) -> Subject:
        port = free_port()
        log_file = self.workdir / f"{key}.log"
        server = Server(label, [*argv, "--port", str(port)], env, port, log_file)
        self.stack.callback(server.stop)
        return Subject(key, label, server, path, MemorySampler(server))

    def intake_server(
        self,
        key: str,
        label: str,
        env: Mapping[str, str],
        path: str,
        workers: int = 1,
        *,
        database: BenchDatabase | None = None,
    ) -> Subject:
        argv = [self.intake, "serve", "--workers", str(workers)]
        subject = self.start(key, label, argv, self.install.env(env), path)
        subject.database = None if database is None else database.name
        return subject

    def ceiling(self, key: str, label: str, stack: Mapping[str, str]) -> Subject:
        argv = [sys.executable, "-m", "bench.ceiling_app"]
        argv += ["--loop", stack["loop"], "--http", stack["http"]]
        return self.start(key, label, argv, ceiling_env(), "/f/ceiling")


def _revision() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT, capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except OSError:
        return None
    return done.stdout.strip() or None


def baseline_subject(options: Options, bench: Bench, results: dict[str, Any]) -> Subject | None:
    """Production as the tree of `--compare-ref` has it, on an empty store of its own."""
    if options.compare_ref is None:
        return None
    code = bench.stack.enter_context(checkout(options.compare_ref))
    log(f"baseline: {code.ref} ({code.revision}), its own migrations on a database of its own")
    results["baseline"] = {"ref": code.ref, "revision": code.revision}
    database, target = bench.database(results, "production_baseline", code)
    database.settle()
    env = code.env(production_env(database.url, options.redis))
    label = f"production at {code.revision}"
    return bench.intake_server("production_baseline", label, env, target.path, database=database)


def production_subjects(
    options: Options, bench: Bench, results: dict[str, Any]
) -> tuple[list[Subject], BenchDatabase, Target]:
    """Production with one worker and with two, each on an empty store of its own, on
    the prefilled store, and as the compared ref has it; the one-worker server's
    database and form."""
    log("storage: a database for the empty store, and one for two workers")
    empty_db, empty_target = bench.database(results, "production")
    two_db, two_target = bench.database(results, "production_2_workers")
    full: tuple[BenchDatabase, Target] | None = None
    if options.prefill > 0:
        log(f"storage: a database bulk-loaded with {options.prefill:,} submissions")
        full = bench.database(results, "production_prefilled")
        seconds = bulk_prefill(full[0].url, full[1], FORM_BODY, options.prefill)
        log(f"storage: loaded in {seconds:.0f} s")
        results["prefill_seconds"] = round(seconds, 1)
    for database in (empty_db, two_db, *([full[0]] if full else [])):
        database.settle()
    subjects = [
        bench.intake_server(
            "production", "production",
            production_env(empty_db.url, options.redis), empty_target.path, database=empty_db,
        ),
        bench.intake_server(
            "production_2_workers", f"production, {TWO_WORKERS} workers",
            production_env(two_db.url, options.redis, TWO_WORKERS), two_target.path,
            TWO_WORKERS, database=two_db,
        ),
    ]  # fmt: skip
    if full is not None:
        stored = full[0].count_submissions()
        results["prefilled_stored"] = stored
        env = production_env(full[0].url, options.redis)
        label = f"production, {stored:,} stored"
        subjects.append(
            bench.intake_server("production_prefilled", label, env, full[1].path, database=full[0])
        )
    baseline = baseline_subject(options, bench, results)
    if baseline is not None:
        subjects.insert(1, baseline)
    return subjects, empty_db, empty_target


def start_all(
    options: Options, bench: Bench, results: dict[str, Any]
) -> tuple[list[Subject], BenchDatabase, Target]:
    """Every server, ready and watched, the ceilings first; the one-worker production
    server's database and form. The serving-stack ceiling runs on what the production
    worker was found running on."""
    subjects, empty_db, empty_target = production_subjects(options, bench, results)
    if not options.skip_embedded:
        subjects.append(embedded.start(bench, results))
    production = subjects[0].server
    production.wait_ready()
    serving = production.stack()
    subjects = [
        bench.ceiling("framework_ceiling_fastest", "ceiling, fastest stack", FASTEST_STACK),
        bench.ceiling("framework_ceiling", "ceiling, serving stack", serving),
        *subjects,
    ]
    for subject in subjects:
        subject.server.wait_ready()
        subject.stack = stack_name(subject.server.stack())
        bench.stack.enter_context(subject.memory)
        log(f"{subject.label}: {subject.stack}")
    return subjects, empty_db, empty_target


@contextmanager
def statements_of(
    options: Options, subjects: list[Subject], results: dict[str, Any]
) -> Iterator[None]:
    """pg_stat_statements over the measurement, for production and the compared ref,
    when the server has it (the bench's own)."""
    measured = [s for s in subjects if s.key in STATEMENTS_OF and s.database is not None]
    if not pg_statements.available(options.postgres):
        log("statements: pg_stat_statements is not loaded on this PostgreSQL server")
        yield
        return
    pg_statements.reset(options.postgres, [str(s.database) for s in measured])
    yield
    for subject in measured:
        if subject.database is not None:
            accepted = combine(subject.slices).accepted
            results.setdefault("statements", {})[subject.key] = pg_statements.read(
                options.postgres, subject.database, accepted
            )


def execute(options: Options, bench: Bench, load: Load, results: dict[str, Any]) -> None:
    check_redis(options.redis)
    check_fastest_stack()
    subjects, empty_db, empty_target = start_all(options, bench, results)
    production = next(subject for subject in subjects if subject.key == "production")
    driver = Driver(load)
    warm_up(driver, subjects, options)
    meter = CpuMeter(options.postgres, options.redis)
    bench.stack.callback(meter.close)
    with statements_of(options, subjects, results):
        results["machine_during_measurement"] = measure(driver, subjects, options, meter)
    results["fixed_rate"] = fixed_rate.measure_workers(options, subjects, meter)
    seconds = max(1.0, options.duration / options.rounds)
    log(f"round trips: production's to PostgreSQL and Redis over {seconds:.0f} s of load")
    results["round_trips"] = round_trips.count(
        empty_db.url, options.redis,
        lambda: driver.run(production.server, production.path, seconds),
    )  # fmt: skip
    stored_production, soak_errors = soak(
        driver, production, empty_db, options.production_submissions
    )
    results["production_submissions"] = stored_production
    results["soak_errors"] = soak_errors
    log(
        f"production: peak RSS {production.memory.peak_mb:.1f} MB after"
        f" {stored_production:,} submissions"
    )
    if options.profile:
        results["profile"] = profile(driver, production, options)
    log(f"storage ceiling: the service's commit from {options.storage_clients} clients")
    storage = run_storage_ceiling(
        empty_db.url, empty_target, FORM_BODY,
        seconds=options.duration, clients=options.storage_clients,
        threads=options.threads, workdir=bench.workdir,
    )  # fmt: skip
    results["storage_ceiling"] = storage.as_json()
    log(f"storage ceiling: {storage.commits_per_s:.0f} commits/s ({storage.tool})")
    log(f"keep-alive: one connection to {keepalive.WORKERS} workers")
    env = bench.install.env(production_env(empty_db.url, options.redis))
    results["keepalive"] = keepalive.run(bench.intake, env, bench.workdir / "keepalive.log")
    for subject in subjects:
        results[subject.key] = subject.as_json()
    if "production_prefilled" in results:
        results["production_prefilled"]["stored"] = results.pop("prefilled_stored")
    results["production_statuses"] = empty_db.statuses()
    listing.measure(options, production_env, bench.workdir, results)
    dashboard.measure(options, production_env, bench.workdir, results)


def run(options: Options, say: Callable[[str], None] = print) -> int:
    """The run, on the servers named, or on the bench's own (bench/services.py)."""
    with ExitStack() as stack:
        return run_on(started(options, stack), say)


def run_on(options: Options, say: Callable[[str], None] = print) -> int:
    if options.listing_only:
        return listing.alone(options, production_env, say)
    if options.dashboard_only:
        return dashboard.alone(options, production_env, say)
    if options.embedded_only:
        return embedded.alone(options, say)
    started = time.monotonic()
    wrk = find_wrk()
    install = installed()
    results: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "revision": _revision(),
        "intake_install": install.description,
        "machine_before": machine.describe(),
        "settings": {
            "duration_s": options.duration,
            "rounds": options.rounds,
            "warmup_s": options.warmup,
            "connections": options.connections,
            "threads": options.threads,
            "prefill": options.prefill,
            "production_submissions": options.production_submissions,
            "quick": options.quick,
            "body_bytes": len(FORM_BODY),
            "form_rate_limit": FORM_RATE,
            "two_workers": TWO_WORKERS,
            "fastest_stack": stack_name(FASTEST_STACK),
            "compare_ref": options.compare_ref,
        },
        "client_size": client_size.measure(),
    }
    with tempfile.TemporaryDirectory(prefix="intake-bench-") as temp, ExitStack() as stack:
        workdir = Path(temp)
        bench = Bench(options, stack, workdir, install)
        load = Load(wrk, write_script(workdir), options.connections, options.threads)
        execute(options, bench, load, results)
    results["machine_after"] = machine.describe()
    results["elapsed_s"] = round(time.monotonic() - started, 1)
    figures = figures_of(results)
    checks = evaluate(figures)
    results["targets"] = [check.as_json() for check in checks]
    options.output.write_text(json.dumps(results, indent=2) + "\n")
    say("")
    say(report(figures, checks))
    say("")
    for key, found in results.get("statements", {}).items():
        say(f"where PostgreSQL's time went per accepted submission, {key}:")
        for line in pg_statements.lines(found):
            say(line)
    listing_met = listing.say_figures(results, say)
    listing_met = dashboard.say_figures(results, say) and listing_met
    others = results["machine_during_measurement"]["others"]
    if others > BUSY_CORES:
        say(
            f"the machine was busy: other processes used {others:.2f} of its"
            f" {os.cpu_count()} cores during the measurement; the ratios hold better than"
            " the absolute figures (see docs/performance.md)"
        )
    else:
        say(f"the machine was quiet: other processes used {others:.2f} cores")
    say(f"intake measured: {install.description}")
    say(f"results: {options.output}; {results['elapsed_s']:.0f} s in all")
    if "profile" in results:
        say(f"profile: {results['profile']['directory']}")
    return 1 if failed(checks) or not listing_met else 0
