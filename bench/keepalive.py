"""Keep-alive latency with several workers: sequential requests, one at a time, on one
kept-alive connection to `intake serve --workers 2`.

wrk's many connections hide a stall on each connection behind the others' requests;
one request at a time on one connection shows it whole. The request is the health check,
so that what is measured is the connection, not the store. A connection without
TCP_NODELAY waits on Nagle's algorithm and the client's delayed acknowledgement whenever
an answer goes out in two writes: some 40 ms a request on Linux.
"""

from __future__ import annotations

import http.client
import statistics
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.servers import Server, free_port

WORKERS = 2
PATH = "/healthz"
WARMUP_REQUESTS = 20
REQUESTS = 500


def run(intake: str, env: Mapping[str, str], log: Path) -> dict[str, Any]:
    """Starts `intake serve` with WORKERS workers on `env`, measures it, and stops it."""
    port = free_port()
    workers = str(WORKERS)
    argv = [intake, "serve", "--workers", workers, "--port", str(port)]
    server = Server("keep-alive", argv, {**env, "INTAKE_WORKERS": workers}, port, log)
    try:
        server.wait_ready()
        return measure(server)
    finally:
        server.stop()


def p50_of(results: Mapping[str, Any]) -> float | None:
    """The figure the target is about, from a results document (None: not measured)."""
    figure = results.get("keepalive")
    return None if figure is None else float(figure["latency_ms"]["p50"])


def measure(server: Server, requests: int = REQUESTS) -> dict[str, Any]:
    """Latency of `requests` sequential requests on one connection (after a warm-up on
    the same connection), in milliseconds."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for _ in range(WARMUP_REQUESTS):
            _request(connection)
        took = []
        for _ in range(requests):
            started = time.perf_counter()
            _request(connection)
            took.append((time.perf_counter() - started) * 1000)
    finally:
        connection.close()
    server.check_alive()
    cuts = statistics.quantiles(took, n=100)
    return {
        "workers": WORKERS,
        "path": PATH,
        "requests": requests,
        "latency_ms": {"p50": round(cuts[49], 3), "p99": round(cuts[98], 3)},
    }


def _request(connection: http.client.HTTPConnection) -> None:
    connection.request("GET", PATH)
    response = connection.getresponse()
    response.read()
    if response.status != 200 or response.will_close:
        raise RuntimeError(
            f"{PATH} answered {response.status}, keep-alive {not response.will_close}"
        )
