"""`python -m bench.cpu_cost`: a quick figure for working on speed, not a verdict.

Starts one `intake serve` worker (production: PostgreSQL and Redis; `--embedded`:
SQLite), drives it with wrk as `make bench` does, and prints the worker's CPU time per
request beside its throughput and latency. CPU per request hardly moves with other load
on the machine, so it tells whether a change made a submission cheaper even while other
work runs; throughput needs the full, quiet `make bench`.
"""

from __future__ import annotations

import argparse
import tempfile
from contextlib import ExitStack
from pathlib import Path

from bench import profiling
from bench.options import parse
from bench.run import Bench
from bench.subjects import Driver
from bench.wrk import Load, find_wrk, write_script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedded", action="store_true", help="SQLite instead of PostgreSQL")
    parser.add_argument("--seconds", type=float, default=10.0, help="each slice (default 10)")
    parser.add_argument("--slices", type=int, default=3, help="slices measured (default 3)")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--profile", type=Path, help="also a py-spy profile (raw) to this file")
    args = parser.parse_args()
    options = parse([])  # the bench's defaults: its PostgreSQL and Redis
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cpu-cost-")))
        bench = Bench(options, stack, workdir)
        env, target = bench.one_store(embedded=args.embedded, workers=args.workers)
        subject = bench.intake_server("subject", "intake", env, target.path, args.workers)
        subject.server.wait_ready()
        load = Load(find_wrk(), write_script(workdir), args.connections, 2)
        driver = Driver(load)
        driver.run(subject.server, target.path, 3)  # warm-up
        for _ in range(args.slices):
            before = subject.server.cpu_seconds()
            result = driver.run(subject.server, target.path, args.seconds)
            cpu_ms = (subject.server.cpu_seconds() - before) * 1000 / max(result.requests, 1)
            print(
                f"{result.accepted_per_s:8.1f} accepted/s  {cpu_ms:6.3f} ms CPU/request"
                f"  p50 {result.latency_ms.get('p50')} ms  p99 {result.latency_ms.get('p99')} ms"
                f"  errors {result.errors}",
                flush=True,
            )
        if args.profile is not None:
            pid = subject.server.worker_pids()[0]
            recorder = profiling.record(pid, args.seconds, args.profile, "raw")
            driver.run(subject.server, target.path, args.seconds + 2)
            recorder.communicate(timeout=args.seconds + 60)
            for share in profiling.summarize(args.profile.read_text()):
                print(f"{share.percent:5.1f}%  {share.component}")


if __name__ == "__main__":
    main()
