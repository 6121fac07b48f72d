"""The `intake` command's startup: the wall time of `intake form show` on a SQLite store,
from the process starting to its exit, the median of several runs. It is what every
management command costs before it does anything: the imports and the opening of what
the command uses. It is run from intake's deployed install (bench/deployed.py), from the
bytecode the install compiled, as a deployment runs it.

`python -m bench.cli_startup` measures this figure alone.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.deployed import installed
from bench.environments import embedded_env
from bench.storage import provision

RUNS = 10


def p50_of(results: Mapping[str, Any]) -> float | None:
    """The figure the target is about, from a results document (None: not measured)."""
    figure = results.get("cli_startup")
    return None if figure is None else float(figure["wall_s"]["p50"])


def measure(
    intake_script: str, env: Mapping[str, str], form_id: str, runs: int = RUNS
) -> dict[str, Any]:
    """`intake form show` run `runs` times, after one run that warms the file cache."""
    argv = [intake_script, "form", "show", form_id]
    _run(argv, env)
    walls = [_run(argv, env) for _ in range(runs)]
    return {
        "command": "intake form show",
        "runs": runs,
        "wall_s": {
            "p50": round(statistics.median(walls), 4),
            "min": round(min(walls), 4),
            "max": round(max(walls), 4),
        },
    }


def _run(argv: list[str], env: Mapping[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=dict(env), stdout=subprocess.DEVNULL, check=True, timeout=60)
    return time.perf_counter() - started


def main() -> int:
    from bench.targets import CLI_STARTUP_S  # noqa: PLC0415 - the run's targets, not its data

    install = installed()
    with tempfile.TemporaryDirectory(prefix="intake-bench-cli-") as temp:
        env = install.env(embedded_env(Path(temp) / "intake.db"))
        target = provision(install.intake, env)
        figure = measure(install.intake, env, target.form_id)
    p50 = figure["wall_s"]["p50"]
    verdict = "PASS" if p50 < CLI_STARTUP_S else "FAIL"
    print(
        f"intake form show on SQLite: {p50:.3f} s wall, median of {figure['runs']}"
        f" (min {figure['wall_s']['min']:.3f}, max {figure['wall_s']['max']:.3f});"
        f" target < {CLI_STARTUP_S} s: {verdict}"
    )
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
