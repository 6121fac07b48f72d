"""Load at a fixed offered rate, below saturation: the CPU one submission costs the
service's processes when one worker or two serve the same traffic.

At saturation, two workers, PostgreSQL, Redis and wrk share the machine's two cores:
each process then waits for a core and runs colder, so the CPU a submission costs
there measures contention as much as the code. Offered the same rate, well under what
one worker can take, both servers do the same work with cores to spare, and the CPU per
accepted submission says what a second worker adds to each submission's cost.

wrk sends as fast as it is answered and Debian ships no wrk2, so the load is the bench's
own: `connections` kept-alive connections, each sending its share of the rate on a
schedule (a request late because the answer before it was late goes at once), every
request from a fresh client address, as wrk's script sends them.
"""

from __future__ import annotations

import asyncio
import secrets
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from attrs import frozen

from bench.cpu_meter import CpuMeter, Spent
from bench.options import Options
from bench.servers import Server
from bench.subjects import Subject, log
from bench.wrk import FORM_BODY, IP_SPAN, combine

# The rate offered, as a share of one worker's saturated throughput in the same run.
SHARE_OF_SATURATED = 0.5


def request_bytes(path: str, number: int) -> bytes:
    """The bench's submission from the `number`th address of the benchmarking range."""
    i = number % IP_SPAN
    ip = f"198.{18 + i // 65536}.{i // 256 % 256}.{i % 256}"
    body = FORM_BODY.encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: bench\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"X-Forwarded-For: {ip}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def answer_status(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(
        int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")
    )
    await reader.readexactly(length)
    return int(lines[0].split()[1])


@frozen
class RateResult:
    """One run at a fixed rate: what was offered, what was answered, how fast."""

    rate: float
    duration_s: float
    statuses: dict[int, int]
    latency_ms: dict[str, float]

    @property
    def sent(self) -> int:
        return sum(self.statuses.values())

    @property
    def accepted(self) -> int:
        return self.statuses.get(201, 0)

    @property
    def errors(self) -> int:
        return self.sent - self.accepted

    @property
    def accepted_per_s(self) -> float:
        return self.accepted / self.duration_s if self.duration_s > 0 else 0.0


async def drive(
    port: int, path: str, rate: float, *, seconds: float, connections: int, first: int
) -> RateResult:
    total = max(1, round(rate * seconds))
    statuses: Counter[int] = Counter()
    latencies: list[float] = []
    start = time.monotonic() + 0.05

    async def connection(lane: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for n in range(lane, total, connections):
                due = start + n / rate
                if (wait := due - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
                sent = time.monotonic()
                writer.write(request_bytes(path, first + n))
                statuses[await answer_status(reader)] += 1
                latencies.append((time.monotonic() - sent) * 1000)
        finally:
            writer.close()

    await asyncio.gather(*(connection(lane) for lane in range(min(connections, total))))
    elapsed = time.monotonic() - start
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    return RateResult(
        rate=rate,
        duration_s=elapsed,
        statuses=dict(statuses),
        latency_ms={"p50": round(cuts[49], 3), "p99": round(cuts[98], 3)},
    )


class RateDriver:
    """Runs fixed-rate loads, each at fresh client addresses."""

    def __init__(self, connections: int) -> None:
        self._connections = connections
        self._offset = secrets.randbelow(IP_SPAN)

    def run(self, server: Server, path: str, rate: float, seconds: float) -> RateResult:
        result = asyncio.run(
            drive(
                server.port,
                path,
                rate,
                seconds=seconds,
                connections=self._connections,
                first=self._offset,
            )
        )
        self._offset += result.sent
        server.check_alive()
        return result


def measure(
    servers: Sequence[Subject],
    rate: float,
    meter: CpuMeter,
    *,
    rounds: int,
    seconds: float,
    connections: int,
) -> dict[str, Any]:
    """Each server at `rate` for `seconds` a round, in an order that turns each round;
    their CPU per accepted submission by process."""
    driver = RateDriver(connections)
    spent = {s.key: Spent() for s in servers}
    runs: dict[str, list[RateResult]] = {s.key: [] for s in servers}
    for round_ in range(rounds):
        turn = [*servers[round_ % len(servers) :], *servers[: round_ % len(servers)]]
        for s in turn:
            before = meter.read(s.server, s.database)
            result = driver.run(s.server, s.path, rate, seconds)
            spent[s.key].add(before, meter.read(s.server, s.database))
            runs[s.key].append(result)
            log(
                f"fixed rate, round {round_ + 1}/{rounds}: {s.label}: {result.accepted_per_s:.0f}"
                f" accepted/s of {rate:.0f} offered, p99 {result.latency_ms['p99']:.1f} ms"
            )
    measured: dict[str, Any] = {"rate": round(rate, 1), "seconds": seconds, "rounds": rounds}
    for key, done in runs.items():
        accepted = sum(part.accepted for part in done)
        measured[key] = {
            "sent": sum(part.sent for part in done),
            "accepted": accepted,
            "errors": sum(part.errors for part in done),
            "accepted_per_s": round(accepted / sum(part.duration_s for part in done), 1),
            "p50_ms": statistics.median(part.latency_ms["p50"] for part in done),
            "p99_ms": statistics.median(part.latency_ms["p99"] for part in done),
            "cpu_ms_per_accepted": spent[key].per_accepted_ms(accepted),
        }
    return measured


def measure_workers(
    options: Options, subjects: Sequence[Subject], meter: CpuMeter
) -> dict[str, Any] | None:
    """One worker and two at the same fixed rate (`--fixed-rate`, or a share of what
    one worker accepted at saturation in the rounds just run)."""
    keys = ("production", "production_2_workers")
    servers = [s for key in keys for s in subjects if s.key == key]
    if len(servers) < len(keys):
        return None
    saturated = combine(servers[0].slices).accepted_per_s
    rate = options.fixed_rate or max(1.0, SHARE_OF_SATURATED * saturated)
    seconds = max(1.0, options.duration / options.rounds)
    return measure(
        servers,
        rate,
        meter,
        rounds=options.rounds,
        seconds=seconds,
        connections=options.connections,
    )
