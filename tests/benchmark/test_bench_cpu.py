"""The bench's CPU accounting: /proc read right, spent time added up per process group
and divided per accepted submission, pg_stat_statements rows as figures per submission,
and the figures read back from a results document."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench import commit_parts, pg_statements, proc_cpu, stage_probe, targets
from bench.cpu_meter import Reading, Spent
from bench.figures import figures_of

# A process whose command holds a space and a parenthesis: fields count after the last ")".
STAT = (
    "4242 (postgres: a) b) S 17 4242 4242 0 -1 4194560 500 0 0 0 250 50 30 20 20 0 1 0"
    " 9000 100000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
)


def test_a_stat_line_gives_the_parent_and_user_plus_system_time() -> None:
    stat = proc_cpu.parse_stat(STAT, ticks=100)

    assert stat.ppid == 17
    assert stat.cpu_s == pytest.approx(3.0)  # 250 + 50 ticks


def _fake_proc(root: Path, processes: dict[int, tuple[int, int]]) -> Path:
    """A /proc with one stat per pid: its parent and its utime, in ticks."""
    for pid, (ppid, ticks) in processes.items():
        (root / str(pid)).mkdir()
        fields = ["S", str(ppid), *["0"] * 9, str(ticks), "0", "0", "0"]
        (root / str(pid) / "stat").write_text(f"{pid} (p) {' '.join(fields)}\n")
    (root / "self").mkdir()  # not a pid: skipped
    return root


def test_a_family_is_the_process_and_all_its_descendants(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path, {1: (0, 5), 10: (1, 100), 11: (10, 200), 12: (11, 300), 20: (1, 7)})

    assert sorted(proc_cpu.family(10, proc)) == [10, 11, 12]
    seconds = proc_cpu.cpu_seconds([10, 11, 12, 99], proc)  # 99 is gone: left out
    assert seconds == {10: 100 / proc_cpu.CLOCK_TICKS, 11: 2.0 * 100 / proc_cpu.CLOCK_TICKS,
                       12: 3.0 * 100 / proc_cpu.CLOCK_TICKS}  # fmt: skip


def test_the_machines_busy_time_leaves_out_idle_and_iowait(tmp_path: Path) -> None:
    # user nice system idle iowait irq softirq steal guest guest_nice
    (tmp_path / "stat").write_text("cpu  100 10 50 1000 40 5 5 0 7 0\ncpu0 1 2 3\n")

    assert proc_cpu.machine_busy_seconds(tmp_path, ticks=100) == pytest.approx(1.7)


def test_time_spent_counts_each_process_from_its_first_reading_or_from_zero() -> None:
    assert proc_cpu.spent({1: 1.0, 2: 5.0}, {1: 1.5, 2: 5.25, 3: 0.5}) == pytest.approx(1.25)


def test_spent_time_adds_up_over_runs_per_group_and_per_accepted_submission() -> None:
    spent = Spent()
    before = Reading({"worker": {1: 1.0}, "postgres": {2: 2.0, 3: 0.0}, "redis": {4: 0.5}}, 10.0)
    after = Reading({"worker": {1: 1.5}, "postgres": {2: 2.25, 3: 0.25}, "redis": {4: 0.55}}, 12.0)
    spent.add(before, after)
    spent.add(before, after)  # a second run alike

    figures = spent.per_accepted_ms(1000)

    assert figures["worker"] == pytest.approx(1.0)
    assert figures["postgres"] == pytest.approx(1.0)
    assert figures["redis"] == pytest.approx(0.1)
    assert figures["service"] == pytest.approx(2.1)
    assert figures["machine"] == pytest.approx(4.0)
    # A server with no stores (a ceiling, SQLite) has no PostgreSQL or Redis readings.
    alone = Spent()
    alone.add(Reading({"worker": {1: 0.0}}, 0.0), Reading({"worker": {1: 0.1}}, 0.2))
    assert alone.per_accepted_ms(100)["postgres"] == 0.0


def test_statement_rows_become_figures_per_accepted_submission_largest_first() -> None:
    rows = [
        (False, 1000, 500.0, 1000, 8000, 0, 100, 300000, "INSERT INTO outbox\n   (a, b)"),
        (True, 125, 1200.0, 1000, 20000, 10, 0, None, "SELECT r.outcome FROM batch"),
    ]

    figures = pg_statements.per_accepted(rows, accepted=1000)

    assert [f["top"] for f in figures] == [True, False]
    insert = figures[1]
    assert insert["query"] == "INSERT INTO outbox (a, b)"
    assert insert["calls"] == 1.0
    assert insert["ms"] == 0.5
    assert insert["ms_per_call"] == 0.5
    assert insert["blocks"] == 8.0
    assert insert["wal_bytes"] == 300.0
    assert figures[0]["ms_per_call"] == pytest.approx(9.6)
    assert pg_statements.one_line("x" * 200, chars=10) == "x" * 9 + "…"


def test_process_cpu_and_the_compared_tree_are_read_back_from_the_results() -> None:
    def server(per_s: float, postgres: float) -> dict[str, object]:
        return {
            "accepted_per_s": per_s, "errors": 0, "peak_rss_mb": 80.0,
            "latency_ms": {"p50": 5.0, "p99": 20.0},
            "cpu_ms_per_accepted": {
                "worker": 0.4, "postgres": postgres, "redis": 0.05, "service": 0.0,
                "machine": 2.0,
            },
        }  # fmt: skip

    figures = figures_of(
        {
            "framework_ceiling": {**server(9000, 0.0), "server_cpu_ms_per_request": 0.07},
            "production": server(1500, 0.3),
            "production_baseline": server(1400, 0.6),
            "baseline": {"ref": "main~3", "revision": "4597a51"},
        }
    )

    assert figures.baseline_revision == "4597a51"
    assert figures.production.cpu == targets.ProcessCpu(0.4, 0.3, 0.05, 2.0)
    assert figures.production.cpu.service == pytest.approx(0.75)
    check = targets.postgres_cpu_check(figures)
    assert check.status is targets.Status.PASS
    assert check.value == pytest.approx(0.5)
    assert "0.300 ms / 0.600 ms at 4597a51 = 0.50x" in check.measured
    service = targets.service_cpu_check(figures)  # no fastest stack: the serving one's
    assert service.value == pytest.approx(0.75 / 0.07)
    assert service.status is targets.Status.FAIL


def test_a_stage_is_summed_up_in_percentiles_and_a_histogram() -> None:
    samples = [float(ms) for ms in range(1, 101)]  # 1 to 100 ms

    figures = stage_probe.summary(samples)

    assert figures["count"] == 100
    assert figures["mean"] == 50.5
    assert (figures["p50"], figures["p90"], figures["p99"], figures["max"]) == (51, 91, 100, 100)
    assert figures["histogram"] == {"<=1": 1, "<=2": 1, "<=5": 3, "<=10": 5, "<=20": 10,
                                    "<=50": 30, "<=100": 50}  # fmt: skip
    assert stage_probe.summary([]) == {"count": 0}
    said = stage_probe.lines({"commit": figures, "size:send": stage_probe.summary([3.0])})
    assert said[0].split()[:4] == ["commit", "n", "100", "p50"]
    assert "p99 3 " in said[1]  # a count: no unit


def test_a_parts_cost_is_the_median_turn_with_it_less_the_median_turn_without() -> None:
    assert commit_parts.saving([0.7, 0.9, 0.8, 5.0], [0.6, 0.65, 0.1]) == pytest.approx(0.25)
