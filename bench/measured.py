"""The figures a run produced, as the targets (bench/targets.py) read them, and a
target's verdict."""

from __future__ import annotations

import enum
from typing import Any

from attrs import frozen


class Status(enum.StrEnum):
    PASS = "PASS"  # noqa: S105 - a status, not a password
    FAIL = "FAIL"
    # The run did not produce what the target is about (a quick run, a skipped phase):
    # neither a pass nor a failure.
    INCOMPLETE = "INCOMPLETE"
    # A figure the targets ask to see beside another, held to no bound.
    REPORTED = "REPORTED"


@frozen
class Phase:
    """One server under one wrk run."""

    accepted_per_s: float
    p50_ms: float
    p99_ms: float
    errors: int
    peak_rss_mb: float
    # The worker's CPU time per request: what other load on the machine changes least.
    cpu_ms_per_request: float | None = None
    cpu: ProcessCpu | None = None

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> Phase:
        cpu = document.get("server_cpu_ms_per_request")
        return cls(
            accepted_per_s=float(document["accepted_per_s"]),
            p50_ms=float(document["latency_ms"]["p50"]),
            p99_ms=float(document["latency_ms"]["p99"]),
            errors=int(document["errors"]),
            peak_rss_mb=float(document["peak_rss_mb"]),
            cpu_ms_per_request=None if cpu is None else float(cpu),
            cpu=ProcessCpu.from_json(document.get("cpu_ms_per_accepted")),
        )


@frozen
class ProcessCpu:
    """CPU milliseconds per accepted submission, by process (bench/cpu_meter.py)."""

    worker: float
    postgres: float
    redis: float
    # Every process of the machine, wrk's and others' too.
    machine: float

    @property
    def service(self) -> float:
        return self.worker + self.postgres + self.redis

    @classmethod
    def from_json(cls, document: dict[str, Any] | None) -> ProcessCpu | None:
        if not document:
            return None
        return cls(
            worker=float(document["worker"]),
            postgres=float(document["postgres"]),
            redis=float(document["redis"]),
            machine=float(document["machine"]),
        )


@frozen
class Ceiling:
    """The bare Starlette app on one stack (event loop + HTTP parser)."""

    per_s: float
    stack: str
    cpu_ms: float | None = None


@frozen
class RoundTrips:
    """What the production server asked of its stores per accepted submission."""

    postgres: float
    redis: float


@frozen
class FixedRate:
    """One worker and two offered the same rate, below saturation (bench/fixed_rate.py)."""

    rate: float
    one: ProcessCpu
    two: ProcessCpu
    one_per_s: float
    two_per_s: float
    errors: int

    @classmethod
    def from_json(cls, document: dict[str, Any] | None) -> FixedRate | None:
        if not document:
            return None
        one, two = document["production"], document["production_2_workers"]
        one_cpu = ProcessCpu.from_json(one["cpu_ms_per_accepted"])
        two_cpu = ProcessCpu.from_json(two["cpu_ms_per_accepted"])
        if one_cpu is None or two_cpu is None:
            return None
        return cls(
            rate=float(document["rate"]),
            one=one_cpu,
            two=two_cpu,
            one_per_s=float(one["accepted_per_s"]),
            two_per_s=float(two["accepted_per_s"]),
            errors=int(one["errors"]) + int(two["errors"]),
        )


@frozen
class Figures:
    # The framework ceiling on the stack `intake serve` runs on, and on the fastest one.
    serving: Ceiling
    storage_per_s: float | None
    production: Phase
    # Submissions the production server had accepted when its peak memory was read.
    production_submissions: int
    fastest: Ceiling | None = None
    # At saturation (32 connections, as fast as answered).
    two_workers: Phase | None = None
    # One worker and two at the same rate below saturation.
    fixed_rate: FixedRate | None = None
    prefilled: Phase | None = None
    stored_when_prefilled: int = 0
    embedded: Phase | None = None
    round_trips: RoundTrips | None = None
    # p50 of sequential requests on one kept-alive connection to two workers.
    keepalive_p50_ms: float | None = None
    # Median wall time of `intake form show` on SQLite, process start to exit.
    cli_startup_s: float | None = None
    # intake.js as shipped, gzipped at level 9 (bench/client_size.py).
    client_gzip_bytes: int | None = None
    # Production as an earlier tree has it (--compare-ref), measured in the same rounds.
    baseline: Phase | None = None
    baseline_revision: str = ""


@frozen
class Check:
    name: str
    measured: str
    target: str
    status: Status
    note: str = ""
    # The number held to the target (a ratio, milliseconds, megabytes), for programs.
    value: float | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "measured": self.measured,
            "target": self.target,
            "status": self.status.value,
            "note": self.note,
            "value": None if self.value is None else round(self.value, 4),
        }
