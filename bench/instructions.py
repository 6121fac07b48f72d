"""`python -m bench.instructions`: the instructions one worker runs per accepted
submission, counted by valgrind's callgrind, for comparing two versions of the code.

CPU time per request (`bench.cpu_cost`) moves with the machine's speed, by a third or
more from one minute to the next on a shared host, which hides any change worth less
than that. An instruction count hardly moves: one `intake serve` worker (production:
PostgreSQL and Redis; `--embedded`: SQLite) runs under callgrind, gets a warm-up, has
its counters zeroed, serves `--requests` submissions from `--connections` kept-alive
connections (each sends its next request when the last is answered, every one from
another client address, as `make bench` sends them), and has its counters read. Only
the worker's own process is counted: PostgreSQL and Redis are not.

Under callgrind the worker runs some fifty times slower, so groups of commits and of
limiter calls are formed as they would be under a load of about a fiftieth: the count
is a cost to compare between versions, not the cost under a full `make bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from bench.fixed_rate import answer_status, request_bytes
from bench.options import parse
from bench.run import Bench
from bench.servers import STARTUP_DEADLINE, Server, ServerError, free_port
from bench.services import started as services_started

# Under callgrind the worker starts and answers some fifty times slower.
SLOWDOWN = 50


async def _load(port: int, path: str, first: int, requests: int, connections: int) -> Counter[int]:
    """Sends `requests` submissions over `connections`; the count of each status."""
    numbers = iter(range(first, first + requests))
    statuses: Counter[int] = Counter()

    async def connection() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for number in numbers:
                writer.write(request_bytes(path, number))
                statuses[await answer_status(reader)] += 1
        finally:
            writer.close()

    await asyncio.gather(*(connection() for _ in range(connections)))
    return statuses


def _callgrind_control(*args: str) -> str:
    return subprocess.run(
        ["callgrind_control", *args], check=True, capture_output=True, text=True
    ).stdout


def _instructions(out_dir: Path) -> int:
    total = 0
    for dump in out_dir.glob("callgrind.out*"):
        for line in dump.read_text(errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                total = max(total, int(line.split()[1]))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedded", action="store_true", help="SQLite instead of PostgreSQL")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--warmup", type=int, default=300)
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("valgrind (with callgrind_control) is not installed")
    options = parse([])
    with ExitStack() as stack:
        options = services_started(options, stack)
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="instr-")))
        bench = Bench(options, stack, workdir)
        env, target, _ = bench.one_store(embedded=args.embedded)
        out_dir = workdir / "callgrind"
        out_dir.mkdir()
        port = free_port()
        argv = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out_dir}/callgrind.out",
            "--dump-instr=no", "--dump-line=no",
            bench.intake, "serve", "--workers", "1", "--port", str(port),
        ]  # fmt: skip
        server = Server("subject", argv, env, port, workdir / "server.log")
        stack.callback(server.stop)
        started = time.monotonic()
        while True:
            try:
                server.wait_ready()
                break
            except ServerError:
                server.check_alive()
                if time.monotonic() - started > STARTUP_DEADLINE * SLOWDOWN / 10:
                    raise
        pid = str(server.process.pid)
        asyncio.run(_load(port, target.path, 0, args.warmup, args.connections))
        _callgrind_control("--zero", pid)
        statuses = asyncio.run(
            _load(port, target.path, args.warmup, args.requests, args.connections)
        )
        _callgrind_control("--dump", pid)
        for _ in range(100):
            count = _instructions(out_dir)
            if count:
                break
            time.sleep(0.1)
        per_request = count / max(args.requests, 1)
        print(
            f"{per_request / 1e6:.3f} M instructions per request"
            f" ({count / 1e6:.1f} M over {args.requests}, {args.connections} connections;"
            f" statuses {dict(statuses)})"
        )


if __name__ == "__main__":
    main()
