"""The embedded default (`intake serve` on SQLite, with its in-process limiter) and the
command's startup on its store: started among the full run's servers, or measured alone
(`python -m bench --embedded-only`) under the same load, for its memory and
`intake form show`'s time without the other servers' minutes."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import cli_startup
from bench.cpu_meter import CpuMeter
from bench.deployed import installed
from bench.environments import embedded_env
from bench.options import Options
from bench.servers import stack_name
from bench.storage import provision
from bench.subjects import Driver, Subject, log, measure, warm_up
from bench.targets import CLI_STARTUP_S, RSS_LIMIT_MB
from bench.wrk import Load, find_wrk, write_script

if TYPE_CHECKING:
    from bench.run import Bench


def start(bench: Bench, results: dict[str, Any]) -> Subject:
    """The embedded server on a store of its own, once `intake form show` was timed on
    that store."""
    (bench.workdir / "embedded").mkdir()
    env = bench.install.env(embedded_env(bench.workdir / "embedded" / "intake.db"))
    target = provision(bench.intake, env)
    log("cli startup: intake form show on the embedded store")
    results["cli_startup"] = cli_startup.measure(bench.intake, env, target.form_id)
    return bench.intake_server("embedded", "embedded", env, target.path)


def alone(options: Options, say: Callable[[str], None]) -> int:
    """`--embedded-only`: the embedded server's warm-up and rounds as in the full run,
    its peak memory over them, and `intake form show`'s time."""
    from bench.run import Bench  # noqa: PLC0415 - bench.run starts its servers through here

    install = installed()
    results: dict[str, Any] = {"intake_install": install.description}
    with tempfile.TemporaryDirectory(prefix="intake-bench-") as temp, ExitStack() as stack:
        workdir = Path(temp)
        bench = Bench(options, stack, workdir, install)
        load = Load(find_wrk(), write_script(workdir), options.connections, options.threads)
        subject = start(bench, results)
        subject.server.wait_ready()
        subject.stack = stack_name(subject.server.stack())
        stack.enter_context(subject.memory)
        driver = Driver(load)
        warm_up(driver, [subject], options)
        meter = CpuMeter(options.postgres, options.redis)
        stack.callback(meter.close)
        results["machine_during_measurement"] = measure(driver, [subject], options, meter)
        results["embedded"] = subject.as_json()
    options.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if say_figures(results, say) else 1


def say_figures(results: dict[str, Any], say: Callable[[str], None]) -> bool:
    """Both figures beside their targets; whether both are met."""
    embedded, startup = results["embedded"], results["cli_startup"]["wall_s"]
    rss, p50 = float(embedded["peak_rss_mb"]), float(startup["p50"])
    accepted = embedded["accepted_per_s"]
    say(
        f"embedded ({embedded['stack']}): peak RSS {rss:.1f} MB (target < {RSS_LIMIT_MB:.0f}),"
        f" {accepted:.0f} accepted/s, p99 {embedded['latency_ms']['p99']:.1f} ms"
    )
    say(
        f"intake form show: {p50:.3f} s p50 (min {startup['min']:.3f}, max {startup['max']:.3f});"
        f" target < {CLI_STARTUP_S} s"
    )
    others = results["machine_during_measurement"]["others"]
    say(f"other processes used {others:.2f} cores during the measurement")
    say(f"intake measured: {results['intake_install']}")
    return rss < RSS_LIMIT_MB and p50 < CLI_STARTUP_S
