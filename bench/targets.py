"""The figures a run produced and the targets they are held to (docs/performance.md
says why each one); bench/report.py prints them."""

from __future__ import annotations

from bench.measured import (
    Ceiling,
    Check,
    Figures,
    FixedRate,
    Phase,
    ProcessCpu,
    RoundTrips,
    Status,
)

__all__ = [
    "Ceiling",
    "Check",
    "Figures",
    "FixedRate",
    "Phase",
    "ProcessCpu",
    "RoundTrips",
    "Status",
    "evaluate",
    "failed",
    "percent",
    "share",
]

# The targets, each for one worker and 32 connections unless it says otherwise.
PRODUCTION_SHARE_OF_FASTEST = 0.15
PRODUCTION_SHARE_OF_SERVING = 0.30
PRODUCTION_P99_MS = 40.0
PRODUCTION_P50_MS = 15.0
EMBEDDED_SHARE_OF_FASTEST = 0.10
RSS_LIMIT_MB = 120.0
RSS_AFTER_SUBMISSIONS = 100_000
# CPU per accepted submission of the service's processes (worker, PostgreSQL, Redis).
POSTGRES_SHARE_OF_BASELINE = 0.5
SERVICE_CPU_PER_CEILING = 5.0
TWO_WORKERS_CPU_GROWTH = 1.10
PREFILLED_SHARE_OF_EMPTY = 0.90
PREFILL_ROWS = 1_000_000
KEEPALIVE_P50_MS = 5.0
CLI_STARTUP_S = 0.3
CLIENT_GZIP_BYTES = 5 * 1024  # intake.js, gzipped: issue 31's 5 KB


def _status(ok: bool) -> Status:
    return Status.PASS if ok else Status.FAIL


def share(part: float, whole: float | None) -> float | None:
    return part / whole if whole else None


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def _share_check(name: str, phase: Phase, ceiling: Ceiling | None, bound: float) -> Check:
    target = f">= {bound:.0%}"
    if ceiling is None:
        return Check(name, "not measured", target, Status.INCOMPLETE, "no ceiling")
    ratio = share(phase.accepted_per_s, ceiling.per_s)
    return Check(
        name,
        f"{phase.accepted_per_s:.0f}/s = {percent(ratio)} of {ceiling.per_s:.0f}/s",
        target,
        _status(ratio is not None and ratio >= bound),
        ceiling.stack,
        ratio,
    )


def _count_check(name: str, errors: int) -> Check:
    return Check(name, str(errors), "= 0", _status(errors == 0), value=errors)


def _errors_check(name: str, phase: Phase) -> Check:
    return _count_check(name, phase.errors)


def _missing(name: str, target: str, why: str) -> Check:
    return Check(name, "not measured", target, Status.INCOMPLETE, why)


def production_checks(figures: Figures) -> list[Check]:
    production = figures.production
    enough = figures.production_submissions >= RSS_AFTER_SUBMISSIONS
    return [
        _share_check(
            "production vs fastest-stack ceiling",
            production, figures.fastest, PRODUCTION_SHARE_OF_FASTEST,
        ),
        _share_check(
            "production vs serving-stack ceiling",
            production, figures.serving, PRODUCTION_SHARE_OF_SERVING,
        ),
        Check(
            "production p99 latency",
            f"{production.p99_ms:.1f} ms",
            f"< {PRODUCTION_P99_MS:.0f} ms",
            _status(production.p99_ms < PRODUCTION_P99_MS),
            value=production.p99_ms,
        ),
        Check(
            "production p50 latency",
            f"{production.p50_ms:.1f} ms",
            f"< {PRODUCTION_P50_MS:.0f} ms",
            _status(production.p50_ms < PRODUCTION_P50_MS),
            value=production.p50_ms,
        ),
        _errors_check("production errors (not 201)", production),
        Check(
            "production peak RSS per worker",
            f"{production.peak_rss_mb:.1f} MB after {figures.production_submissions:,}",
            f"< {RSS_LIMIT_MB:.0f} MB after {RSS_AFTER_SUBMISSIONS:,}",
            _status(production.peak_rss_mb < RSS_LIMIT_MB) if enough else Status.INCOMPLETE,
            "" if enough else f"only {figures.production_submissions:,} submissions",
            production.peak_rss_mb,
        ),
    ]  # fmt: skip


def _ms(value: float) -> str:
    return f"{value:.3f} ms"


def postgres_cpu_check(figures: Figures) -> Check:
    """PostgreSQL's CPU per accepted submission against the earlier tree's, measured in
    the same rounds."""
    name = "PostgreSQL CPU per submission vs the compared tree"
    target = f"<= {POSTGRES_SHARE_OF_BASELINE:.0%} of it"
    now = figures.production.cpu
    then = figures.baseline.cpu if figures.baseline else None
    if now is None or then is None or then.postgres <= 0:
        return _missing(name, target, "no --compare-ref, or no CPU read")
    ratio = now.postgres / then.postgres
    return Check(
        name,
        f"{_ms(now.postgres)} / {_ms(then.postgres)} at {figures.baseline_revision} = {ratio:.2f}x",
        target,
        _status(ratio <= POSTGRES_SHARE_OF_BASELINE),
        f"worker+PostgreSQL+Redis there: {_ms(then.service)}, here {_ms(now.service)}",
        ratio,
    )


def service_cpu_check(figures: Figures) -> Check:
    """The CPU every process serving a submission spent on it against the framework's
    bare request (the fastest stack's ceiling app, its worker's CPU per request)."""
    name = "worker+PostgreSQL+Redis CPU per submission vs ceiling's per request"
    target = f"<= {SERVICE_CPU_PER_CEILING:.0f}x"
    now = figures.production.cpu
    ceiling = figures.fastest or figures.serving
    if now is None or not ceiling.cpu_ms:
        return _missing(name, target, "no CPU read")
    ratio = now.service / ceiling.cpu_ms
    return Check(
        name,
        f"{_ms(now.service)} / {_ms(ceiling.cpu_ms)} = {ratio:.1f}x",
        target,
        _status(ratio <= SERVICE_CPU_PER_CEILING),
        f"the whole machine: {_ms(now.machine)}",
        ratio,
    )


def _growth(two: ProcessCpu, one: ProcessCpu) -> tuple[str, float | None]:
    growth = share(two.service, one.service)
    shown = "n/a" if growth is None else f"{growth:.2f}x"
    return f"{_ms(two.service)} / {_ms(one.service)} = {shown}", growth


def two_workers_checks(figures: Figures) -> list[Check]:
    """Two workers cost no more CPU per submission, theirs and their stores', than one,
    offered the same rate below saturation: a second core then adds what it can. At
    saturation two workers, PostgreSQL, Redis and wrk share two cores, and the figure
    there, shown beside, says as much of their contention as of the code."""
    name = "two workers' CPU per submission vs one worker's, same fixed rate"
    target = f"<= {TWO_WORKERS_CPU_GROWTH:.2f}x"
    fixed = figures.fixed_rate
    checks: list[Check] = []
    if fixed is None:
        checks.append(_missing(name, target, "not run"))
    else:
        measured, growth = _growth(fixed.two, fixed.one)
        accepted = f"{fixed.two_per_s:.0f}/s and {fixed.one_per_s:.0f}/s accepted"
        checks += [
            Check(
                name,
                measured,
                target,
                _status(growth is not None and growth <= TWO_WORKERS_CPU_GROWTH),
                f"{fixed.rate:.0f}/s offered: {accepted}",
                growth,
            ),
            _count_check("fixed-rate errors (not 201)", fixed.errors),
        ]
    two = figures.two_workers
    saturated = "two workers' CPU per submission vs one worker's, saturated"
    if two is None or two.cpu is None or figures.production.cpu is None:
        return [*checks, _missing(saturated, "shown beside", "not run")]
    measured, growth = _growth(two.cpu, figures.production.cpu)
    return [
        *checks,
        Check(
            saturated,
            measured,
            "shown beside",
            Status.REPORTED,
            f"{two.accepted_per_s:.0f}/s against {figures.production.accepted_per_s:.0f}/s",
            growth,
        ),
        _errors_check("two workers errors (not 201)", two),
    ]


def prefilled_checks(figures: Figures) -> list[Check]:
    name = "throughput with the store prefilled"
    prefilled = figures.prefilled
    if prefilled is None:
        return [_missing(name, f">= {PREFILLED_SHARE_OF_EMPTY:.0%} of empty", "no prefill")]
    kept = share(prefilled.accepted_per_s, figures.production.accepted_per_s)
    full = figures.stored_when_prefilled >= PREFILL_ROWS
    return [
        Check(
            name,
            f"{prefilled.accepted_per_s:.0f}/s = {percent(kept)} of empty, "
            f"{figures.stored_when_prefilled:,} stored",
            f">= {PREFILLED_SHARE_OF_EMPTY:.0%} of empty with {PREFILL_ROWS:,} stored",
            _status(kept is not None and kept >= PREFILLED_SHARE_OF_EMPTY)
            if full
            else Status.INCOMPLETE,
            "" if full else f"only {figures.stored_when_prefilled:,} stored",
            kept,
        ),
        _errors_check("prefilled errors (not 201)", prefilled),
    ]


def embedded_checks(figures: Figures) -> list[Check]:
    embedded = figures.embedded
    share_name = "embedded vs fastest-stack ceiling"
    rss_name = "embedded peak RSS"
    rss_target = f"< {RSS_LIMIT_MB:.0f} MB"
    if embedded is None:
        return [
            _missing(share_name, f">= {EMBEDDED_SHARE_OF_FASTEST:.0%}", "--skip-embedded"),
            _missing(rss_name, rss_target, "--skip-embedded"),
        ]
    return [
        _share_check(share_name, embedded, figures.fastest, EMBEDDED_SHARE_OF_FASTEST),
        Check(
            rss_name,
            f"{embedded.peak_rss_mb:.1f} MB",
            rss_target,
            _status(embedded.peak_rss_mb < RSS_LIMIT_MB),
            value=embedded.peak_rss_mb,
        ),
        _errors_check("embedded errors (not 201)", embedded),
    ]


def storage_check(figures: Figures) -> Check:
    """The storage ceiling beside the round trips production makes per submission: a
    server that makes one commit round trip per submission cannot pass the ceiling."""
    name = "storage ceiling and production round trips"
    target = "reported side by side"
    storage = "n/a" if figures.storage_per_s is None else f"{figures.storage_per_s:.0f} commits/s"
    trips = figures.round_trips
    if trips is None:
        return Check(name, f"{storage}; round trips not counted", target, Status.INCOMPLETE)
    return Check(
        name,
        f"{storage}; round trips per accepted {trips.postgres:.2f} PostgreSQL,"
        f" {trips.redis:.2f} Redis",
        target,
        Status.REPORTED if figures.storage_per_s is not None else Status.INCOMPLETE,
        value=trips.postgres,
    )


def keepalive_check(figures: Figures) -> Check:
    name = "keep-alive p50, two workers, one connection"
    target = f"< {KEEPALIVE_P50_MS:.0f} ms"
    if figures.keepalive_p50_ms is None:
        return Check(name, "not measured", target, Status.INCOMPLETE)
    measured = figures.keepalive_p50_ms
    return Check(
        name, f"{measured:.2f} ms", target, _status(measured < KEEPALIVE_P50_MS), value=measured
    )


def cli_startup_check(figures: Figures) -> Check:
    name = "intake form show on SQLite, wall time p50"
    target = f"< {CLI_STARTUP_S} s"
    if figures.cli_startup_s is None:
        return Check(name, "not measured", target, Status.INCOMPLETE)
    measured = figures.cli_startup_s
    return Check(
        name, f"{measured:.3f} s", target, _status(measured < CLI_STARTUP_S), value=measured
    )


def client_size_check(figures: Figures) -> Check:
    name = "intake.js gzipped (unminified)"
    target = f"<= {CLIENT_GZIP_BYTES} bytes"
    if figures.client_gzip_bytes is None:
        return Check(name, "not measured", target, Status.INCOMPLETE)
    measured = figures.client_gzip_bytes
    return Check(
        name,
        f"{measured} bytes",
        target,
        _status(measured <= CLIENT_GZIP_BYTES),
        "minified it is smaller still",
        measured,
    )


def evaluate(figures: Figures) -> list[Check]:
    return [
        *production_checks(figures),
        postgres_cpu_check(figures),
        service_cpu_check(figures),
        *two_workers_checks(figures),
        *prefilled_checks(figures),
        *embedded_checks(figures),
        storage_check(figures),
        keepalive_check(figures),
        cli_startup_check(figures),
        client_size_check(figures),
    ]


def failed(checks: list[Check]) -> bool:
    return any(check.status is Status.FAIL for check in checks)
