"""The load generator: wrk, driven by a Lua script that sends valid form submissions and
reports its figures as one JSON line.

wrk itself counts only socket errors and statuses of 400 and above; the script counts
every status, so that anything but a 201 (a 429 from a tripped limit, a 303, a 503) is
an error of the run.
"""

from __future__ import annotations

import json
import statistics
import subprocess
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attrs import frozen

from bench.debian import command_from_debian

JSON_MARK = "BENCH_JSON "

# The benchmarking range of RFC 2544 (198.18.0.0/15): addresses that are no one's, said
# in X-Forwarded-For only; no traffic goes to them.
IP_SPAN = 2**17

# What a contact form sends: nothing the content scoring flags, so every submission is
# accepted and counts against the quota, as a real one does.
FORM_BODY = (
    "name=Ada+Lovelace&email=ada%40example.com&subject=Analytical+engine"
    "&message=Hello%2C+I+would+like+to+know+more+about+your+services+for+our+"
    "team+of+twelve.+Could+you+call+me+back+on+Tuesday+afternoon%3F+Thanks."
)

# setup() runs in wrk's main thread, once per thread; init() and request() in each
# thread's own Lua state. Each thread walks its own residue class of the address span,
# starting at the run's offset, so no address is reused before the span is used up.
LUA_SCRIPT = r"""
local threads = {}
local next_id = 0

function setup(thread)
    thread:set("tid", next_id)
    next_id = next_id + 1
    table.insert(threads, thread)
end

function init(args)
    path = args[1]
    offset = tonumber(args[2])
    span = tonumber(args[3])
    step = tonumber(args[4])
    body = args[5]
    n = tid
    statuses = {}
end

function request()
    local i = (offset + n) % span
    n = n + step
    local ip = string.format("198.%d.%d.%d", 18 + math.floor(i / 65536),
        math.floor(i / 256) % 256, i % 256)
    return wrk.format("POST", path, {
        ["Content-Type"] = "application/x-www-form-urlencoded",
        ["X-Forwarded-For"] = ip,
    }, body)
end

function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
    local codes = {}
    for _, thread in ipairs(threads) do
        local counted = thread:get("statuses")
        if counted then
            for code, count in pairs(counted) do
                codes[code] = (codes[code] or 0) + count
            end
        end
    end
    local parts = {}
    for code, count in pairs(codes) do
        table.insert(parts, string.format('"%d":%d', code, count))
    end
    local e = summary.errors
    io.write(string.format(
        'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
        '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
        '"latency_us":{"mean":%.1f,"stdev":%.1f,"max":%d,' ..
        '"p50":%d,"p90":%d,"p99":%d,"p999":%d},"statuses":{%s}}\n',
        summary.requests, summary.duration, summary.bytes,
        e.connect, e.read, e.write, e.status, e.timeout,
        latency.mean, latency.stdev, latency.max,
        latency:percentile(50), latency:percentile(90), latency:percentile(99),
        latency:percentile(99.9), table.concat(parts, ",")))
end
"""


class WrkError(RuntimeError):
    """wrk could not run, or said nothing the bench can read."""


@frozen
class LoadResult:
    """One wrk run, as its script reported it. Latencies are in milliseconds."""

    requests: int
    duration_s: float
    statuses: dict[int, int]
    socket_errors: dict[str, int]
    latency_ms: dict[str, float]

    @property
    def accepted(self) -> int:
        return self.statuses.get(201, 0)

    @property
    def errors(self) -> int:
        """Every request that was not a 201, and every connection that failed."""
        return (self.requests - self.accepted) + sum(
            count for kind, count in self.socket_errors.items() if kind != "status"
        )

    @property
    def accepted_per_s(self) -> float:
        return self.accepted / self.duration_s if self.duration_s > 0 else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "accepted": self.accepted,
            "errors": self.errors,
            "duration_s": round(self.duration_s, 3),
            "accepted_per_s": round(self.accepted_per_s, 1),
            "latency_ms": self.latency_ms,
            "statuses": {str(code): count for code, count in sorted(self.statuses.items())},
            "socket_errors": self.socket_errors,
        }


def combine(slices: Sequence[LoadResult]) -> LoadResult:
    """Several runs against one server as one: requests, statuses and errors add up;
    each latency figure is the median of the runs' (the slowest for `max`), so that one
    run disturbed by other work on the machine does not stand for all of them."""
    if not slices:
        raise ValueError("nothing to combine")
    statuses: Counter[int] = Counter()
    errors: Counter[str] = Counter()
    for part in slices:
        statuses.update(part.statuses)
        errors.update(part.socket_errors)
    names = set().union(*(part.latency_ms for part in slices))
    latency = {
        name: max(part.latency_ms.get(name, 0.0) for part in slices)
        if name == "max"
        else round(statistics.median(part.latency_ms.get(name, 0.0) for part in slices), 3)
        for name in sorted(names)
    }
    return LoadResult(
        requests=sum(part.requests for part in slices),
        duration_s=sum(part.duration_s for part in slices),
        statuses=dict(statuses),
        socket_errors=dict(errors),
        latency_ms=latency,
    )


def parse_output(text: str) -> LoadResult:
    """The script's JSON line out of wrk's whole output."""
    for line in text.splitlines():
        if line.startswith(JSON_MARK):
            document = json.loads(line[len(JSON_MARK) :])
            break
    else:
        raise WrkError(f"wrk printed no {JSON_MARK.strip()} line:\n{text[-2000:]}")
    latency = document["latency_us"]
    return LoadResult(
        requests=int(document["requests"]),
        duration_s=int(document["duration_us"]) / 1e6,
        statuses={int(code): int(count) for code, count in document["statuses"].items()},
        socket_errors={kind: int(count) for kind, count in document["errors"].items()},
        latency_ms={name: round(float(value) / 1000, 3) for name, value in latency.items()},
    )


def find_wrk() -> str:
    """wrk on PATH, installed from Debian's packages when missing and we may."""
    found = command_from_debian("wrk", "wrk")
    if found:
        return found
    raise WrkError(
        "wrk is not installed and cannot be installed here: install it "
        "(Debian/Ubuntu: apt-get install wrk) and run the bench again"
    )


def write_script(directory: Path) -> Path:
    path = directory / "submit.lua"
    path.write_text(LUA_SCRIPT)
    return path


@frozen
class Load:
    """How to drive one run: where, how hard, for how long."""

    wrk: str
    script: Path
    connections: int
    threads: int
    timeout_s: float = 10.0

    def command(self, base_url: str, path: str, seconds: float, offset: int) -> list[str]:
        return [
            self.wrk,
            f"-t{self.threads}",
            f"-c{self.connections}",
            f"-d{max(1, round(seconds))}s",
            f"--timeout={self.timeout_s:g}s",
            "-s",
            str(self.script),
            base_url,
            "--",
            path,
            str(offset % IP_SPAN),
            str(IP_SPAN),
            str(self.threads),
            FORM_BODY,
        ]

    def run(self, base_url: str, path: str, seconds: float, offset: int) -> LoadResult:
        command = self.command(base_url, path, seconds, offset)
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=seconds + 60, check=False
            )
        except subprocess.TimeoutExpired as error:
            raise WrkError(f"wrk did not finish within {seconds + 60:.0f} s") from error
        if done.returncode != 0:
            raise WrkError(f"wrk exited with {done.returncode}: {done.stderr.strip()}")
        return parse_output(done.stdout)
