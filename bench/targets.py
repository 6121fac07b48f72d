"""The figures a run produced, the targets they are held to, and the report."""

from __future__ import annotations

import enum
from typing import Any

from attrs import frozen

# The targets (docs/performance.md says why each one).
PRODUCTION_SHARE_OF_FRAMEWORK = 0.25
PRODUCTION_P99_MS = 40.0
EMBEDDED_SHARE_OF_FRAMEWORK = 0.15
RSS_LIMIT_MB = 120.0
RSS_AFTER_SUBMISSIONS = 100_000
PREFILLED_SHARE_OF_EMPTY = 0.90
PREFILL_ROWS = 1_000_000
KEEPALIVE_P50_MS = 5.0
CLI_STARTUP_S = 0.3


class Status(enum.StrEnum):
    PASS = "PASS"  # noqa: S105 - a status, not a password
    FAIL = "FAIL"
    # The run did not produce what the target is about (a quick run, a skipped phase):
    # neither a pass nor a failure.
    INCOMPLETE = "INCOMPLETE"


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
        )


@frozen
class Figures:
    framework_per_s: float
    storage_per_s: float | None
    production: Phase
    # Submissions the production server had accepted when its peak memory was read.
    production_submissions: int
    prefilled: Phase | None = None
    stored_when_prefilled: int = 0
    embedded: Phase | None = None
    framework_cpu_ms: float | None = None
    # p50 of sequential requests on one kept-alive connection to two workers.
    keepalive_p50_ms: float | None = None
    # Median wall time of `intake form show` on SQLite, process start to exit.
    cli_startup_s: float | None = None


@frozen
class Check:
    name: str
    measured: str
    target: str
    status: Status
    note: str = ""

    def as_json(self) -> dict[str, str]:
        return {
            "name": self.name,
            "measured": self.measured,
            "target": self.target,
            "status": self.status.value,
            "note": self.note,
        }


def _status(ok: bool) -> Status:
    return Status.PASS if ok else Status.FAIL


def share(part: float, whole: float | None) -> float | None:
    return part / whole if whole else None


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


def evaluate(figures: Figures) -> list[Check]:
    checks: list[Check] = []
    production = figures.production
    framework = figures.framework_per_s

    ratio = share(production.accepted_per_s, framework)
    checks.append(
        Check(
            "production throughput vs framework ceiling",
            f"{production.accepted_per_s:.0f}/s = {_percent(ratio)} of {framework:.0f}/s",
            f">= {PRODUCTION_SHARE_OF_FRAMEWORK:.0%}",
            _status(ratio is not None and ratio >= PRODUCTION_SHARE_OF_FRAMEWORK),
        )
    )
    checks.append(
        Check(
            "production p99 latency",
            f"{production.p99_ms:.1f} ms",
            f"< {PRODUCTION_P99_MS:.0f} ms",
            _status(production.p99_ms < PRODUCTION_P99_MS),
        )
    )
    checks.append(
        Check(
            "production errors (not 201)",
            str(production.errors),
            "= 0",
            _status(production.errors == 0),
        )
    )
    enough = figures.production_submissions >= RSS_AFTER_SUBMISSIONS
    checks.append(
        Check(
            "production peak RSS per worker",
            f"{production.peak_rss_mb:.1f} MB after {figures.production_submissions:,}",
            f"< {RSS_LIMIT_MB:.0f} MB after {RSS_AFTER_SUBMISSIONS:,}",
            _status(production.peak_rss_mb < RSS_LIMIT_MB) if enough else Status.INCOMPLETE,
            "" if enough else f"only {figures.production_submissions:,} submissions",
        )
    )
    prefilled = figures.prefilled
    if prefilled is None:
        checks.append(
            Check(
                "throughput with the store prefilled",
                "not measured",
                f">= {PREFILLED_SHARE_OF_EMPTY:.0%} of empty",
                Status.INCOMPLETE,
                "no prefill",
            )
        )
    else:
        kept = share(prefilled.accepted_per_s, production.accepted_per_s)
        full = figures.stored_when_prefilled >= PREFILL_ROWS
        checks.append(
            Check(
                "throughput with the store prefilled",
                f"{prefilled.accepted_per_s:.0f}/s = {_percent(kept)} of empty, "
                f"{figures.stored_when_prefilled:,} stored",
                f">= {PREFILLED_SHARE_OF_EMPTY:.0%} of empty with {PREFILL_ROWS:,} stored",
                _status(kept is not None and kept >= PREFILLED_SHARE_OF_EMPTY)
                if full
                else Status.INCOMPLETE,
                "" if full else f"only {figures.stored_when_prefilled:,} stored",
            )
        )
        checks.append(
            Check(
                "prefilled errors (not 201)",
                str(prefilled.errors),
                "= 0",
                _status(prefilled.errors == 0),
            )
        )
    embedded = figures.embedded
    if embedded is None:
        checks.append(
            Check(
                "embedded throughput vs framework ceiling",
                "not measured",
                f">= {EMBEDDED_SHARE_OF_FRAMEWORK:.0%}",
                Status.INCOMPLETE,
                "--skip-embedded",
            )
        )
    else:
        ratio = share(embedded.accepted_per_s, framework)
        checks.append(
            Check(
                "embedded throughput vs framework ceiling",
                f"{embedded.accepted_per_s:.0f}/s = {_percent(ratio)} of {framework:.0f}/s",
                f">= {EMBEDDED_SHARE_OF_FRAMEWORK:.0%}",
                _status(ratio is not None and ratio >= EMBEDDED_SHARE_OF_FRAMEWORK),
            )
        )
        checks.append(
            Check(
                "embedded errors (not 201)",
                str(embedded.errors),
                "= 0",
                _status(embedded.errors == 0),
            )
        )
    checks.append(keepalive_check(figures))
    checks.append(cli_startup_check(figures))
    return checks


def keepalive_check(figures: Figures) -> Check:
    name = "keep-alive p50, two workers, one connection"
    target = f"< {KEEPALIVE_P50_MS:.0f} ms"
    if figures.keepalive_p50_ms is None:
        return Check(name, "not measured", target, Status.INCOMPLETE)
    measured = figures.keepalive_p50_ms
    return Check(name, f"{measured:.2f} ms", target, _status(measured < KEEPALIVE_P50_MS))


def cli_startup_check(figures: Figures) -> Check:
    name = "intake form show on SQLite, wall time p50"
    target = f"< {CLI_STARTUP_S} s"
    if figures.cli_startup_s is None:
        return Check(name, "not measured", target, Status.INCOMPLETE)
    measured = figures.cli_startup_s
    return Check(name, f"{measured:.3f} s", target, _status(measured < CLI_STARTUP_S))


def failed(checks: list[Check]) -> bool:
    return any(check.status is Status.FAIL for check in checks)


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True))


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    rule = "  ".join("-" * width for width in widths)
    return [_row(header, widths), rule, *(_row(row, widths) for row in rows)]


def figures_table(figures: Figures) -> list[str]:
    """Each server's figures side by side, and its ratio to each ceiling."""
    columns: list[tuple[str, Phase]] = [("production", figures.production)]
    if figures.prefilled is not None:
        columns.append((f"production, {figures.stored_when_prefilled:,} stored", figures.prefilled))
    if figures.embedded is not None:
        columns.append(("embedded", figures.embedded))
    rows = [
        ["accepted submissions/s", *(f"{p.accepted_per_s:.0f}" for _, p in columns)],
        ["p50 latency", *(f"{p.p50_ms:.1f} ms" for _, p in columns)],
        ["p99 latency", *(f"{p.p99_ms:.1f} ms" for _, p in columns)],
        ["errors (not 201)", *(str(p.errors) for _, p in columns)],
        ["peak RSS per worker", *(f"{p.peak_rss_mb:.1f} MB" for _, p in columns)],
        [
            "worker CPU per request",
            *(
                "n/a" if p.cpu_ms_per_request is None else f"{p.cpu_ms_per_request:.2f} ms"
                for _, p in columns
            ),
        ],
        [
            f"vs framework ceiling ({figures.framework_per_s:.0f}/s)",
            *(_percent(share(p.accepted_per_s, figures.framework_per_s)) for _, p in columns),
        ],
        [
            "vs storage ceiling ("
            + ("n/a" if figures.storage_per_s is None else f"{figures.storage_per_s:.0f}/s")
            + ")",
            *(_percent(share(p.accepted_per_s, figures.storage_per_s)) for _, p in columns),
        ],
    ]
    return _table(["", *(name for name, _ in columns)], rows)


def checks_table(checks: list[Check]) -> list[str]:
    rows = [
        [check.name, check.measured, check.target, check.status.value, check.note]
        for check in checks
    ]
    return _table(["target", "measured", "target value", "status", ""], rows)


def ceilings(figures: Figures) -> str:
    framework = f"framework ceiling {figures.framework_per_s:.0f} submissions/s"
    if figures.framework_cpu_ms is not None:
        framework += f" ({figures.framework_cpu_ms:.2f} ms of worker CPU each)"
    storage = (
        "storage ceiling not measured"
        if figures.storage_per_s is None
        else f"storage ceiling {figures.storage_per_s:.0f} commits/s"
    )
    return f"{framework}; {storage}"


def report(figures: Figures, checks: list[Check]) -> str:
    return "\n".join([ceilings(figures), "", *figures_table(figures), "", *checks_table(checks)])
