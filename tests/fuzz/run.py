"""Runs every fuzz target (or one) for a time budget, one process per target.

    python -m tests.fuzz.run --seconds 600            # `make fuzz`: the budget is shared
    python -m tests.fuzz.run --seconds 60 --target multipart

Each target starts from its seed corpus in `tests/fuzz/corpus/<target>/`, which is only
read: what the fuzzer finds, and any crash, goes to a temporary directory outside the
repository. On a crash the directory is kept and the reproducer's path printed, with the
command that replays it; otherwise it is removed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from attrs import frozen

from tests.fuzz.targets import MAX_LEN, TARGETS

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
# libFuzzer's names for what it keeps: a failing input, a slow one, one that ran out of
# memory, one that leaked.
_FINDINGS = ("crash-", "timeout-", "oom-", "leak-", "slow-unit-")
_RUNS = re.compile(r"Done (\d+) runs")
# Beyond the fuzzing time: starting Python, instrumenting the imports, reading the corpus.
_GRACE_SECONDS = 120


@frozen
class FuzzResult:
    target: str
    returncode: int
    runs: int
    findings: tuple[Path, ...]
    log: Path

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.findings

    def reproduce_command(self, finding: Path) -> str:
        return f"{sys.executable} -m tests.fuzz.harness {self.target} {finding}"


def run_target(target: str, seconds: int, workdir: Path) -> FuzzResult:
    """Fuzzes one target for `seconds` in a child process; new inputs, findings and the
    log are written under `workdir`."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}")
    found = workdir / target / "findings"
    grown = workdir / target / "corpus"
    found.mkdir(parents=True, exist_ok=True)
    grown.mkdir(parents=True, exist_ok=True)
    log = workdir / target / "fuzz.log"
    command = [
        sys.executable,
        "-m",
        "tests.fuzz.harness",
        target,
        f"-max_total_time={seconds}",
        f"-max_len={MAX_LEN}",
        "-timeout=10",  # seconds for one input: a slower one is a finding
        "-rss_limit_mb=2048",
        f"-artifact_prefix={found}/",
        "-print_final_stats=1",
        str(grown),  # the first directory receives new inputs
        str(CORPUS / target),
    ]
    with log.open("w") as sink:
        try:
            done = subprocess.run(
                command,
                cwd=ROOT,
                stdout=sink,
                stderr=subprocess.STDOUT,
                timeout=seconds + _GRACE_SECONDS,
                check=False,
            )
            returncode = done.returncode
        except subprocess.TimeoutExpired:
            sink.write(f"\nthe fuzzer did not stop within {seconds + _GRACE_SECONDS} s\n")
            returncode = -1
    text = log.read_text(errors="replace")
    runs = _RUNS.findall(text)
    findings = tuple(sorted(path for path in found.iterdir() if path.name.startswith(_FINDINGS)))
    return FuzzResult(target, returncode, int(runs[-1]) if runs else 0, findings, log)


def report(result: FuzzResult) -> str:
    if result.ok:
        return f"{result.target}: {result.runs} runs, nothing found"
    lines = [f"{result.target}: FAILED (exit {result.returncode}), log {result.log}"]
    for finding in result.findings:
        lines.append(f"  reproducer: {finding}")
        lines.append(f"  replay with: {result.reproduce_command(finding)}")
    if not result.findings:
        lines.append("  no reproducer was written; see the log")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fuzz.run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--seconds",
        type=int,
        default=600,
        help="total fuzzing time, shared equally by the targets (default 600)",
    )
    parser.add_argument(
        "--target",
        action="append",
        choices=sorted(TARGETS),
        help="fuzz only this target (may be given more than once)",
    )
    args = parser.parse_args(argv)
    targets: list[str] = args.target or list(TARGETS)
    each = max(1, args.seconds // len(targets))
    workdir = Path(tempfile.mkdtemp(prefix="intake-fuzz-"))
    failed = False
    for target in targets:
        print(f"fuzzing {target} for {each} s ...", flush=True)
        result = run_target(target, each, workdir)
        print(report(result), flush=True)
        failed = failed or not result.ok
    if failed:
        print(f"findings and logs kept in {workdir}", flush=True)
        return 1
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
