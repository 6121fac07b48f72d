"""`python -m bench.cpu_cost`: a quick figure for working on speed, not a verdict.

Starts one `intake serve` worker (production: PostgreSQL and Redis, the bench's own
unless named; `--embedded`: SQLite), drives it with wrk as `make bench` does, and prints
the CPU time per accepted submission of the worker, of PostgreSQL and of Redis beside its
throughput and latency, then where PostgreSQL's time went, statement by statement. CPU
per submission hardly moves with other load on the machine, so it tells whether a change
made a submission cheaper even while other work runs; throughput needs the full, quiet
`make bench`.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench import pg_statements, profiling, stage_probe
from bench.cpu_meter import CpuMeter, Spent
from bench.fixed_rate import RateDriver, RateResult
from bench.options import parse
from bench.run import Bench, ceiling_env
from bench.services import started
from bench.subjects import Driver
from bench.wrk import Load, LoadResult, find_wrk, write_script


def read_when_written(path: Path, seconds: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            document: dict[str, Any] = json.loads(path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            time.sleep(0.1)
            continue
        return document
    raise RuntimeError(f"the stage probe wrote nothing to {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedded", action="store_true", help="SQLite instead of PostgreSQL")
    parser.add_argument("--seconds", type=float, default=10.0, help="each slice (default 10)")
    parser.add_argument("--slices", type=int, default=3, help="slices measured (default 3)")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--rate",
        type=float,
        help="offer this many submissions a second (bench/fixed_rate.py) instead of wrk's"
        " load as fast as answered",
    )
    parser.add_argument("--profile", type=Path, help="also a py-spy profile (raw) to this file")
    parser.add_argument(
        "--stages",
        action="store_true",
        help="time where each request waits (bench/stage_probe.py; one worker)",
    )
    args = parser.parse_args()
    options = parse([])  # the bench's defaults
    with ExitStack() as stack:
        options = started(options, stack)
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cpu-cost-")))
        bench = Bench(options, stack, workdir)
        env, target, database = bench.one_store(embedded=args.embedded, workers=args.workers)
        stages = workdir / "stages.json"
        if args.stages:
            argv = [sys.executable, "-m", "bench.stage_probe", str(stages), "serve"]
            env = {**env, "PYTHONPATH": ceiling_env()["PYTHONPATH"]}
            subject = bench.start("subject", "intake", argv, env, target.path)
        else:
            subject = bench.intake_server("subject", "intake", env, target.path, args.workers)
        subject.server.wait_ready()
        load = Load(find_wrk(), write_script(workdir), args.connections, 2)
        driver = Driver(load)
        driver.run(subject.server, target.path, 3)  # warm-up
        if args.stages:
            subject.server.process.send_signal(signal.SIGUSR1)  # the probe forgets it
        meter = CpuMeter(options.postgres, options.redis)
        stack.callback(meter.close)
        statements = database is not None and pg_statements.available(options.postgres)
        if statements and database is not None:
            pg_statements.reset(options.postgres, [database])
        accepted = 0
        rated = RateDriver(args.connections)
        for _ in range(args.slices):
            spent = Spent()
            before = meter.read(subject.server, database)
            result: LoadResult | RateResult = (
                driver.run(subject.server, target.path, args.seconds)
                if args.rate is None
                else rated.run(subject.server, target.path, args.rate, args.seconds)
            )
            spent.add(before, meter.read(subject.server, database))
            accepted += result.accepted
            cpu = spent.per_accepted_ms(result.accepted)
            print(
                f"{result.accepted_per_s:8.1f} accepted/s  CPU ms/accepted: worker"
                f" {cpu['worker']:.3f} PostgreSQL {cpu['postgres']:.3f} Redis"
                f" {cpu['redis']:.3f} machine {cpu['machine']:.3f}"
                f"  p50 {result.latency_ms.get('p50')} ms  p99 {result.latency_ms.get('p99')} ms"
                f"  not 201: {result.errors}",
                flush=True,
            )
        if args.stages:
            subject.server.process.send_signal(signal.SIGUSR2)
            print("where a request's time went (ms; size: calls a batch carried):")
            for line in stage_probe.lines(read_when_written(stages)):
                print(line)
        if statements and database is not None:
            print("PostgreSQL's time per accepted submission:")
            for line in pg_statements.lines(
                pg_statements.read(options.postgres, database, accepted), limit=15
            ):
                print(line)
        if args.profile is not None:
            pid = subject.server.worker_pids()[0]
            recorder = profiling.record(pid, args.seconds, args.profile, "raw")
            driver.run(subject.server, target.path, args.seconds + 2)
            recorder.communicate(timeout=args.seconds + 60)
            for share in profiling.summarize(args.profile.read_text()):
                print(f"{share.percent:5.1f}%  {share.component}")


if __name__ == "__main__":
    main()
