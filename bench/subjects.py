"""The servers under test as the bench drives them: wrk runs at fresh client addresses,
the measurement in turning rounds, the soak that reads memory after enough submissions,
and the py-spy profile."""

from __future__ import annotations

import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

from attrs import define, field

from bench import machine, profiling
from bench.cpu_meter import CpuMeter, Spent
from bench.options import Options
from bench.servers import MemorySampler, Server
from bench.storage import BenchDatabase
from bench.wrk import IP_SPAN, Load, LoadResult, combine

# Extra production load to reach the submissions the memory target is read after: in
# rounds of at most a minute, and no more than four minutes in all, so that a slow
# server makes the run report too few submissions rather than run for an hour.
SOAK_ROUND_SECONDS = 60.0
SOAK_BUDGET_SECONDS = 240.0


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


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
    # The event loop and HTTP parser it ran on (Server.stack), once it answered.
    stack: str = ""
    # The database it stores in, whose backends count as its PostgreSQL processes.
    database: str | None = None
    # Its processes' and its stores' CPU over the measured runs (bench/cpu_meter.py).
    spent: Spent = field(factory=Spent)

    def as_json(self) -> dict[str, Any]:
        combined = combine(self.slices)
        return {
            "stack": self.stack,
            **combined.as_json(),
            "peak_rss_mb": round(self.memory.peak_mb, 1),
            # The worker's own CPU time per request: unlike throughput, other load on
            # the machine hardly changes it.
            "server_cpu_ms_per_request": round(
                self.cpu_seconds * 1000 / max(combined.requests, 1), 3
            ),
            "cpu_ms_per_accepted": self.spent.per_accepted_ms(combined.accepted),
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


def warm_up(driver: Driver, subjects: list[Subject], options: Options) -> None:
    for subject in subjects:
        log(f"warm-up: {subject.label}")
        driver.run(subject.server, subject.path, options.warmup)


def measure(
    driver: Driver, subjects: list[Subject], options: Options, meter: CpuMeter
) -> dict[str, float]:
    """`rounds` rounds in which each server gets its share of the duration, in an order
    that turns each round. Returns the cores each kind of process used meanwhile."""
    watch = machine.Watch()
    seconds = max(1.0, options.duration / options.rounds)
    for round_ in range(options.rounds):
        turn = subjects[round_ % len(subjects) :] + subjects[: round_ % len(subjects)]
        for subject in turn:
            before = subject.server.cpu_seconds()
            reading = meter.read(subject.server, subject.database)
            result = driver.run(subject.server, subject.path, seconds)
            subject.spent.add(reading, meter.read(subject.server, subject.database))
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
