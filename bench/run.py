"""One run of the bench (docs/performance.md):

1. two PostgreSQL databases of the run's own: one empty, one bulk-loaded with stored
   submissions (`--prefill`), each with a workspace and a form made by `intake`;
2. four servers side by side, one worker each: the framework ceiling (a bare Starlette
   app under the same uvicorn settings), production on the empty store, production on
   the prefilled store, and the embedded default (SQLite, in-process limiter);
3. the measurement: wrk against each server in turn, in several rounds, so that other
   work on a shared machine weighs on all of them alike and the ratios hold;
4. more production load until enough submissions went through to read its memory;
5. optionally a py-spy profile of the production worker under the same load;
6. the storage ceiling: pgbench running the service's own commit statement.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attrs import define, field

from bench import cli_startup, keepalive, listing, machine, profiling
from bench.options import Options
from bench.servers import MemorySampler, Server, console_script, free_port
from bench.storage import BenchDatabase, Target, check_redis, clear_rate_limits, provision
from bench.storage import prefill as bulk_prefill
from bench.storage import storage_ceiling as run_storage_ceiling
from bench.targets import Figures, Phase, evaluate, failed, report
from bench.wrk import FORM_BODY, IP_SPAN, Load, LoadResult, combine, find_wrk, write_script

ROOT = Path(__file__).resolve().parent.parent
# The per-form ceiling (600 per 10 minutes by default) would refuse a benchmark's load
# from its first second: raised for the run, so the windows are still counted and
# checked on every request but only the per-IP ones could refuse, and none do.
FORM_RATE = "1000000000/600"
# Extra production load to reach the submissions the memory target is read after: in
# rounds of at most a minute, and no more than four minutes in all, so that a slow
# server makes the run report too few submissions rather than run for an hour.
SOAK_ROUND_SECONDS = 60.0
SOAK_BUDGET_SECONDS = 240.0
# Other processes using more than this many cores on average during the measurement
# make the report say that the machine was busy.
BUSY_CORES = 0.25


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def _base_env() -> dict[str, str]:
    """The environment without any INTAKE_ setting of the caller's: each server gets its
    defaults plus what the bench sets."""
    return {k: v for k, v in os.environ.items() if not k.startswith("INTAKE_")}


def production_env(database_url: str, redis_url: str) -> dict[str, str]:
    return {
        **_base_env(),
        "INTAKE_DATABASE_URL": database_url,
        "INTAKE_REDIS_URL": redis_url,
        "INTAKE_TRUSTED_PROXIES": "127.0.0.1/32",
        "INTAKE_RATE_LIMIT_PUBLIC_FORM": FORM_RATE,
        "INTAKE_WORKERS": "1",
    }


def embedded_env(database_path: Path) -> dict[str, str]:
    return {
        **_base_env(),
        "INTAKE_DATABASE_URL": f"sqlite:///{database_path}",
        "INTAKE_TRUSTED_PROXIES": "127.0.0.1/32",
        "INTAKE_RATE_LIMIT_PUBLIC_FORM": FORM_RATE,
        "INTAKE_WORKERS": "1",
    }


class Driver:
    """Runs wrk against a server, each run at fresh client addresses."""

    def __init__(self, load: Load) -> None:
        self._load = load
        # A random start in the address span: a run right after another (or after an
        # earlier bench) does not meet the windows its addresses left behind.
        self._offset = secrets.randbelow(IP_SPAN)

    def run(self, server: Server, path: str, seconds: float) -> LoadResult:
        result = self._load.run(server.base, path, seconds, self._offset)
        self._offset += result.requests + self._load.connections
        server.check_alive()
        return result


@define
class Subject:
    """A server under test, and what its measurement gathered."""

    key: str
    label: str
    server: Server
    path: str
    memory: MemorySampler
    slices: list[LoadResult] = field(factory=list)
    cpu_seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        combined = combine(self.slices)
        return {
            **combined.as_json(),
            "peak_rss_mb": round(self.memory.peak_mb, 1),
            # The worker's own CPU time per request: unlike throughput, other load on
            # the machine hardly changes it.
            "server_cpu_ms_per_request": round(
                self.cpu_seconds * 1000 / max(combined.requests, 1), 3
            ),
            "slices": [
                {
                    "accepted_per_s": round(part.accepted_per_s, 1),
                    "p50_ms": part.latency_ms.get("p50"),
                    "p99_ms": part.latency_ms.get("p99"),
                    "errors": part.errors,
                }
                for part in self.slices
            ],
        }


def measure(driver: Driver, subjects: list[Subject], options: Options) -> dict[str, float]:
    """A warm-up of each server, then `rounds` rounds in which each gets its share of
    the duration, in an order that turns each round. Returns the cores each kind of
    process used meanwhile."""
    for subject in subjects:
        log(f"warm-up: {subject.label}")
        driver.run(subject.server, subject.path, options.warmup)
    watch = machine.Watch()
    seconds = max(1.0, options.duration / options.rounds)
    for round_ in range(options.rounds):
        turn = subjects[round_ % len(subjects) :] + subjects[: round_ % len(subjects)]
        for subject in turn:
            before = subject.server.cpu_seconds()
            result = driver.run(subject.server, subject.path, seconds)
            subject.cpu_seconds += subject.server.cpu_seconds() - before
            subject.slices.append(result)
            log(
                f"round {round_ + 1}/{options.rounds}: {subject.label}:"
                f" {result.accepted_per_s:.0f} accepted/s, p99 {result.latency_ms['p99']:.1f}"
                f" ms, {result.errors} errors"
            )
    return watch.finish()


def soak(driver: Driver, subject: Subject, database: BenchDatabase, wanted: int) -> tuple[int, int]:
    """More of the same load until `wanted` submissions went through the server, within
    the budget. Returns the submissions stored and the errors of this load."""
    rate = max(combine(subject.slices).accepted_per_s, 1.0)
    deadline = time.monotonic() + SOAK_BUDGET_SECONDS
    errors = 0
    stored = database.count_submissions()
    while stored < wanted and (left := deadline - time.monotonic()) >= 1:
        seconds = min(SOAK_ROUND_SECONDS, left, max(2.0, (wanted - stored) / rate * 1.1))
        log(f"{subject.label}: {wanted - stored:,} more submissions to go, {seconds:.0f} s")
        result = driver.run(subject.server, subject.path, seconds)
        rate = max(result.accepted_per_s, 1.0)
        errors += result.errors
        stored = database.count_submissions()
    return stored, errors


def profile(driver: Driver, subject: Subject, options: Options) -> dict[str, Any]:
    directory = options.profile_dir or Path(tempfile.mkdtemp(prefix="intake-bench-profile-"))
    directory.mkdir(parents=True, exist_ok=True)
    pid = subject.server.worker_pids()[0]
    outputs: dict[str, Any] = {"directory": str(directory)}
    for fmt, name in (("raw", "profile.txt"), ("flamegraph", "profile.svg")):
        path = directory / name
        log(f"profile: py-spy record --format {fmt} for {options.duration:.0f} s")
        recorder = profiling.record(pid, options.duration, path, fmt)
        # Load for as long as py-spy samples, and a little more so it never runs idle.
        result = driver.run(subject.server, subject.path, options.duration + 2)
        _, errors = recorder.communicate(timeout=options.duration + 60)
        if recorder.returncode != 0:
            raise RuntimeError(f"py-spy failed: {errors.decode(errors='replace').strip()}")
        outputs[name] = str(path)
        if fmt == "raw":
            shares = profiling.summarize(path.read_text())
            outputs["accepted_per_s_while_sampled"] = round(result.accepted_per_s, 1)
            outputs["components"] = [
                {"component": s.component, "samples": s.samples, "percent": s.percent}
                for s in shares
            ]
            for share in shares:
                log(f"profile: {share.percent:5.1f}%  {share.component}")
    return outputs


class Bench:
    """The run's resources, opened in order and closed in reverse by one ExitStack."""

    def __init__(self, options: Options, stack: ExitStack, workdir: Path) -> None:
        self.options = options
        self.stack = stack
        self.workdir = workdir
        self.intake = console_script("intake")

    def database(self, results: dict[str, Any], key: str) -> tuple[BenchDatabase, Target]:
        database = BenchDatabase(self.options.admin_url)
        database.create()
        self.stack.callback(database.drop)
        env = production_env(database.url, self.options.redis_url)
        target = provision(self.intake, env)
        self.stack.callback(clear_rate_limits, self.options.redis_url, target.form_id)
        results.setdefault("databases", {})[key] = {
            "database": database.name,
            "form_id": target.form_id,
        }
        return database, target

    def start(
        self, key: str, label: str, argv: list[str], env: Mapping[str, str], path: str
    ) -> Subject:
        port = free_port()
        log_file = self.workdir / f"{key}.log"
        server = Server(label, [*argv, "--port", str(port)], env, port, log_file)
        self.stack.callback(server.stop)
        return Subject(key, label, server, path, MemorySampler(server))

    def intake_server(self, key: str, label: str, env: Mapping[str, str], path: str) -> Subject:
        return self.start(key, label, [self.intake, "serve", "--workers", "1"], env, path)


def _phase(document: Mapping[str, Any]) -> Phase:
    return Phase.from_json(dict(document))


def figures_of(results: Mapping[str, Any]) -> Figures:
    prefilled = results.get("production_prefilled")
    embedded_phase = results.get("embedded")
    storage = results.get("storage_ceiling")
    framework = results["framework_ceiling"]
    return Figures(
        framework_per_s=float(framework["accepted_per_s"]),
        framework_cpu_ms=framework.get("server_cpu_ms_per_request"),
        storage_per_s=float(storage["commits_per_s"]) if storage else None,
        production=_phase(results["production"]),
        production_submissions=int(results.get("production_submissions", 0)),
        prefilled=_phase(prefilled) if prefilled else None,
        stored_when_prefilled=int(prefilled["stored"]) if prefilled else 0,
        embedded=_phase(embedded_phase) if embedded_phase else None,
        keepalive_p50_ms=keepalive.p50_of(results),
        cli_startup_s=cli_startup.p50_of(results),
    )


def _revision() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT, capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except OSError:
        return None
    return done.stdout.strip() or None


def execute(options: Options, bench: Bench, load: Load, results: dict[str, Any]) -> None:
    check_redis(options.redis_url)
    log("storage: a database for the empty store")
    empty_db, empty_target = bench.database(results, "production")
    full: tuple[BenchDatabase, Target] | None = None
    if options.prefill > 0:
        log(f"storage: a database bulk-loaded with {options.prefill:,} submissions")
        full = bench.database(results, "production_prefilled")
        seconds = bulk_prefill(full[0].url, full[1], FORM_BODY, options.prefill)
        log(f"storage: loaded in {seconds:.0f} s")
        results["prefill_seconds"] = round(seconds, 1)
    for database in (empty_db, *([full[0]] if full else [])):
        database.settle()
    stored = full[0].count_submissions() if full else 0

    subjects = [
        bench.start(
            "framework_ceiling", "framework ceiling",
            [sys.executable, "-m", "bench.ceiling_app"],
            {**_base_env(), "PYTHONPATH": str(ROOT)}, "/f/ceiling",
        ),
        bench.intake_server(
            "production", "production",
            production_env(empty_db.url, options.redis_url), empty_target.path,
        ),
    ]  # fmt: skip
    if full is not None:
        env = production_env(full[0].url, options.redis_url)
        label = f"production, {stored:,} stored"
        subjects.append(bench.intake_server("production_prefilled", label, env, full[1].path))
    if not options.skip_embedded:
        (bench.workdir / "embedded").mkdir()
        env = embedded_env(bench.workdir / "embedded" / "intake.db")
        target = provision(bench.intake, env)
        log("cli startup: intake form show on the embedded store")
        results["cli_startup"] = cli_startup.measure(bench.intake, env, target.form_id)
        subjects.append(bench.intake_server("embedded", "embedded", env, target.path))
    for subject in subjects:
        subject.server.wait_ready()
        bench.stack.enter_context(subject.memory)

    driver = Driver(load)
    results["machine_during_measurement"] = measure(driver, subjects, options)
    production = subjects[1]
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
    env = production_env(empty_db.url, options.redis_url)
    results["keepalive"] = keepalive.run(bench.intake, env, bench.workdir / "keepalive.log")
    for subject in subjects:
        results[subject.key] = subject.as_json()
    if full is not None:
        results["production_prefilled"]["stored"] = stored
    results["production_statuses"] = empty_db.statuses()
    listing.measure(options, production_env, bench.workdir, results)


def run(options: Options, say: Callable[[str], None] = print) -> int:
    if options.listing_only:
        return listing.alone(options, production_env, say)
    started = time.monotonic()
    wrk = find_wrk()
    results: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "revision": _revision(),
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
        },
    }
    with tempfile.TemporaryDirectory(prefix="intake-bench-") as temp, ExitStack() as stack:
        workdir = Path(temp)
        bench = Bench(options, stack, workdir)
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
    listing_met = listing.say_figures(results, say)
    others = results["machine_during_measurement"]["others"]
    if others > BUSY_CORES:
        say(
            f"the machine was busy: other processes used {others:.2f} of its"
            f" {os.cpu_count()} cores during the measurement; the ratios hold better than"
            " the absolute figures (see docs/performance.md)"
        )
    else:
        say(f"the machine was quiet: other processes used {others:.2f} cores")
    say(f"results: {options.output}; {results['elapsed_s']:.0f} s in all")
    if "profile" in results:
        say(f"profile: {results['profile']['directory']}")
    return 1 if failed(checks) or not listing_met else 0
