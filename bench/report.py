"""The printed report of a run: the ceilings, each server's figures side by side with
its ratio to each ceiling, and each target with its measured figure and status."""

from __future__ import annotations

from bench.targets import Ceiling, Check, Figures, Phase, percent, share


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True))


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    rule = "  ".join("-" * width for width in widths)
    return [_row(header, widths), rule, *(_row(row, widths) for row in rows)]


def _per_s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}/s"


def columns_of(figures: Figures) -> list[tuple[str, Phase]]:
    columns: list[tuple[str, Phase]] = [("production", figures.production)]
    if figures.baseline is not None:
        columns.append((f"production at {figures.baseline_revision}", figures.baseline))
    if figures.two_workers is not None:
        columns.append(("production, 2 workers", figures.two_workers))
    if figures.prefilled is not None:
        columns.append((f"production, {figures.stored_when_prefilled:,} stored", figures.prefilled))
    if figures.embedded is not None:
        columns.append(("embedded", figures.embedded))
    return columns


CPU_ROWS = (
    ("CPU per accepted: worker", "worker"),
    ("CPU per accepted: PostgreSQL", "postgres"),
    ("CPU per accepted: Redis", "redis"),
    ("CPU per accepted: the three", "service"),
    ("CPU per accepted: whole machine", "machine"),
)


def cpu_rows(columns: list[tuple[str, Phase]]) -> list[list[str]]:
    """Each process's CPU per accepted submission (bench/cpu_meter.py)."""
    return [
        [label, *("n/a" if p.cpu is None else f"{getattr(p.cpu, key):.3f} ms" for _, p in columns)]
        for label, key in CPU_ROWS
    ]


def figures_table(figures: Figures) -> list[str]:
    """Each server's figures side by side, and its ratio to each ceiling."""
    columns = columns_of(figures)
    fastest = figures.fastest.per_s if figures.fastest else None
    serving = figures.serving.per_s
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
        *cpu_rows(columns),
        [
            f"vs fastest-stack ceiling ({_per_s(fastest)})",
            *(percent(share(p.accepted_per_s, fastest)) for _, p in columns),
        ],
        [
            f"vs serving-stack ceiling ({_per_s(serving)})",
            *(percent(share(p.accepted_per_s, serving)) for _, p in columns),
        ],
        [
            f"vs storage ceiling ({_per_s(figures.storage_per_s)})",
            *(percent(share(p.accepted_per_s, figures.storage_per_s)) for _, p in columns),
        ],
    ]
    return _table(["", *(name for name, _ in columns)], rows)


def fixed_rate_table(figures: Figures) -> list[str]:
    """One worker and two offered the same rate below saturation: their CPU per accepted
    submission, process by process."""
    fixed = figures.fixed_rate
    if fixed is None:
        return []
    columns = [("1 worker", fixed.one, fixed.one_per_s), ("2 workers", fixed.two, fixed.two_per_s)]
    rows = [["accepted submissions/s", *(f"{per_s:.0f}" for *_, per_s in columns)]]
    rows += [
        [label, *(f"{getattr(cpu, key):.3f} ms" for _, cpu, _ in columns)]
        for label, key in CPU_ROWS
    ]
    header = [f"production at {fixed.rate:.0f}/s offered", *(name for name, *_ in columns)]
    return ["", *_table(header, rows)]


def checks_table(checks: list[Check]) -> list[str]:
    rows = [
        [check.name, check.measured, check.target, check.status.value, check.note]
        for check in checks
    ]
    return _table(["target", "measured", "target value", "status", ""], rows)


def _ceiling(name: str, ceiling: Ceiling | None) -> str:
    if ceiling is None:
        return f"{name} not measured"
    text = f"{name} ({ceiling.stack}) {ceiling.per_s:.0f} submissions/s"
    if ceiling.cpu_ms is not None:
        text += f", {ceiling.cpu_ms:.2f} ms of worker CPU each"
    return text


def ceilings(figures: Figures) -> list[str]:
    storage = (
        "storage ceiling not measured"
        if figures.storage_per_s is None
        else f"storage ceiling {figures.storage_per_s:.0f} commits/s (pgbench, one commit"
        " statement a round trip)"
    )
    trips = figures.round_trips
    if trips is not None:
        storage += (
            f"; production's round trips per accepted submission: {trips.postgres:.2f} to"
            f" PostgreSQL (transactions), {trips.redis:.2f} to Redis (requests read)"
        )
    return [
        "framework ceiling: " + _ceiling("fastest stack", figures.fastest),
        "framework ceiling: " + _ceiling("serving stack", figures.serving),
        storage,
    ]


def report(figures: Figures, checks: list[Check]) -> str:
    return "\n".join(
        [
            *ceilings(figures),
            "",
            *figures_table(figures),
            *fixed_rate_table(figures),
            "",
            *checks_table(checks),
        ]
    )
