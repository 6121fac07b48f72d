"""A load generator in a process of its own, for the fault-injection tests.

    python -m tests.support.loadgen --base-url http://127.0.0.1:8000 --public-key KEY \\
        --ledger run.jsonl [--form-id ID --api-key KEY] [--concurrency 8 | --rate 40] \\
        [--duration 30 | --count 500] [--client-ip IP] [--challenge-token T] [--no-keepalive]
    python -m tests.support.loadgen ... --replay earlier.jsonl --ledger again.jsonl

It sends valid submissions, alternately form-urlencoded and JSON, to the public endpoint
`/f/{key}` and, given an API key, every fourth one to the server endpoint; each carries
an Idempotency-Key of its own. Each public request names a client address of its own in
X-Forwarded-For (the server must trust 127.0.0.1 as a proxy), so the per-IP limits are
not what is measured, unless `--client-ip` sends them all from one address.

`--concurrency N` keeps N requests in flight (closed loop); `--rate R` starts R requests
a second whatever the answers (open loop, at most `--max-inflight` at once), which shows
whether a server under a fault lets requests pile up. `--replay` re-sends the requests
of an earlier ledger: the same key, payload, encoding, route and address.

The ledger is one JSON line per request, written as its answer arrives (so a run that is
killed keeps what it saw): `seq`, `key`, `route`, `encoding`, `ip`, `payload`,
`started` (Unix time), `elapsed` (seconds), `status` (null when no answer came),
`submission_id`, `replayed`, `retry_after`, `error_code`, `envelope` (the body is the
error envelope), `transport_error` (the exception's name) and `sent` (false when the
connection was refused, so the server cannot have seen it). SIGTERM or SIGINT stops
starting requests, waits for those in flight, and ends the run normally. `--summary`
receives the totals and the in-flight count sampled every 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import suppress
from pathlib import Path
from typing import IO, Any

import httpx

SERVER_SHARE = 4  # every fourth request goes to the server endpoint, given an API key
TRANSPORT_PAUSE = 0.05  # a connection that failed waits this long before its next try
SAMPLE_EVERY = 0.1


def client_address(seq: int) -> str:
    """A distinct address per request, from 10.0.0.0/8."""
    n = seq + 1
    return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


def payload_for(seq: int, run_id: str, challenge_token: str | None) -> dict[str, str]:
    payload = {
        "name": f"Visitor {seq}",
        "email": f"visitor{seq}@example.com",
        "message": f"Hello, this is message {seq} of run {run_id}. Thank you for reading it.",
    }
    if challenge_token is not None:
        payload["cf-turnstile-response"] = challenge_token
    return payload


class Ledger:
    def __init__(self, sink: IO[str]) -> None:
        self._sink = sink
        self.statuses: Counter[str] = Counter()

    def write(self, entry: Mapping[str, Any]) -> None:
        # One write per line, flushed: a reader polling the file sees whole lines.
        self._sink.write(json.dumps(entry, separators=(",", ":")) + "\n")
        self._sink.flush()
        status = entry["status"]
        self.statuses[str(status) if status is not None else "no answer"] += 1


class LoadGenerator:
    def __init__(self, args: argparse.Namespace, ledger: Ledger) -> None:
        self.args = args
        self.ledger = ledger
        self.run_id: str = args.run_id or secrets.token_hex(4)
        self.stopping = asyncio.Event()
        self.inflight = 0
        self.max_inflight = 0
        self.samples: list[tuple[float, int]] = []
        self.skipped = 0  # open loop: starts dropped at --max-inflight
        self._next_seq = 0
        self._deadline = (
            time.monotonic() + args.duration if args.duration is not None else float("inf")
        )
        self._replays: Iterator[dict[str, Any]] | None = None
        if args.replay is not None:
            entries = [
                json.loads(line) for line in Path(args.replay).read_text().splitlines() if line
            ]
            self._replays = iter(entries)

    # -- what to send ----------------------------------------------------------

    def _next(self) -> dict[str, Any] | None:
        if self.stopping.is_set() or time.monotonic() >= self._deadline:
            return None
        if self._replays is not None:
            earlier = next(self._replays, None)
            if earlier is None:
                return None
            return {k: earlier[k] for k in ("seq", "key", "route", "encoding", "ip", "payload")}
        seq = self._next_seq
        if self.args.count is not None and seq >= self.args.count:
            return None
        self._next_seq += 1
        server = self.args.api_key is not None and seq % SERVER_SHARE == SERVER_SHARE - 1
        return {
            "seq": seq,
            "key": f"load-{self.run_id}-{seq}",
            "route": "server" if server else "public",
            # Alternating, shifted every SERVER_SHARE requests so both routes get both.
            "encoding": "form" if (seq + seq // SERVER_SHARE) % 2 == 0 else "json",
            "ip": self.args.client_ip or client_address(seq),
            "payload": payload_for(seq, self.run_id, self.args.challenge_token),
        }

    # -- sending ---------------------------------------------------------------

    async def send(self, client: httpx.AsyncClient, request: dict[str, Any]) -> bool:
        """Sends one request and writes its ledger line; False when no answer came."""
        base = self.args.base_url.rstrip("/")
        headers = {"Idempotency-Key": request["key"], "Accept": "application/json"}
        if request["route"] == "server":
            url = f"{base}/v1/forms/{self.args.form_id}/submissions"
            headers["Authorization"] = f"Bearer {self.args.api_key}"
        else:
            url = f"{base}/f/{self.args.public_key}"
            headers["X-Forwarded-For"] = request["ip"]
        body: dict[str, Any] = (
            {"data": request["payload"]}
            if request["encoding"] == "form"
            else {"json": request["payload"]}
        )
        entry: dict[str, Any] = {
            **request,
            "started": time.time(),
            "status": None,
            "submission_id": None,
            "replayed": False,
            "retry_after": None,
            "error_code": None,
            "envelope": False,
            "transport_error": None,
            "sent": True,
        }
        began = time.perf_counter()
        self.inflight += 1
        self.max_inflight = max(self.max_inflight, self.inflight)
        response: httpx.Response | None = None
        try:
            response = await client.post(url, headers=headers, **body)
        except httpx.TransportError as error:
            entry["transport_error"] = type(error).__name__
            # A refused connection never carried the request.
            entry["sent"] = not isinstance(error, httpx.ConnectError)
        finally:
            self.inflight -= 1
            entry["elapsed"] = time.perf_counter() - began
        if response is not None:
            _read_answer(response, entry)
        self.ledger.write(entry)
        return response is not None

    async def closed_loop(self, client: httpx.AsyncClient) -> None:
        async def worker() -> None:
            while (request := self._next()) is not None:
                if not await self.send(client, request):
                    await asyncio.sleep(TRANSPORT_PAUSE)

        await asyncio.gather(*(worker() for _ in range(self.args.concurrency)))

    async def open_loop(self, client: httpx.AsyncClient) -> None:
        interval = 1.0 / self.args.rate
        tasks: set[asyncio.Task[bool]] = set()
        next_start = time.monotonic()
        while (request := self._next()) is not None:
            if self.inflight >= self.args.max_inflight:
                self.skipped += 1
            else:
                task = asyncio.create_task(self.send(client, request))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            next_start += interval
            pause = next_start - time.monotonic()
            if pause > 0:
                with suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), pause)
        if tasks:
            await asyncio.gather(*tasks)

    async def sample(self) -> None:
        while True:
            self.samples.append((time.time(), self.inflight))
            await asyncio.sleep(SAMPLE_EVERY)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self.stopping.set)
        connections = self.args.max_inflight if self.args.rate else self.args.concurrency
        limits = httpx.Limits(
            max_connections=connections,
            max_keepalive_connections=0 if self.args.no_keepalive else connections,
        )
        sampler = asyncio.create_task(self.sample())
        try:
            async with httpx.AsyncClient(
                timeout=httpx.Timeout(self.args.timeout), limits=limits, trust_env=False
            ) as client:
                if self.args.rate:
                    await self.open_loop(client)
                else:
                    await self.closed_loop(client)
        finally:
            sampler.cancel()


def _read_answer(response: httpx.Response, entry: dict[str, Any]) -> None:
    entry["status"] = response.status_code
    entry["retry_after"] = response.headers.get("Retry-After")
    entry["replayed"] = response.headers.get("Idempotent-Replayed") == "true"
    try:
        body = response.json()
    except ValueError:
        return
    if not isinstance(body, dict):
        return
    if body.get("ok") is True:
        entry["submission_id"] = body.get("submission_id")
        return
    error = body.get("error")
    if isinstance(error, dict):
        entry["error_code"] = error.get("code")
        entry["envelope"] = (
            body.get("ok") is False
            and isinstance(error.get("code"), str)
            and isinstance(error.get("message"), str)
            and isinstance(body.get("request_id"), str)
        )


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.support.loadgen")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--public-key", required=True)
    parser.add_argument("--form-id", help="with --api-key: also use the server endpoint")
    parser.add_argument("--api-key")
    parser.add_argument("--ledger", required=True, type=Path)
    parser.add_argument("--summary", type=Path)
    load = parser.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    load.add_argument("--rate", type=float, help="requests started per second (open loop)")
    parser.add_argument("--max-inflight", type=int, default=500)
    parser.add_argument("--duration", type=float, help="seconds to run")
    parser.add_argument("--count", type=int, help="requests to send")
    parser.add_argument("--replay", type=Path, help="re-send the requests of this ledger")
    parser.add_argument("--client-ip", help="send every public request from this address")
    parser.add_argument("--challenge-token", help="a bot-challenge token field to include")
    parser.add_argument("--run-id", help="makes the Idempotency-Keys (default: random)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    parser.add_argument("--no-keepalive", action="store_true", help="a connection per request")
    args = parser.parse_args(argv)
    if args.api_key is not None and args.form_id is None:
        parser.error("--api-key needs --form-id")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    began = time.time()
    with args.ledger.open("a", encoding="utf-8") as sink:
        generator = LoadGenerator(args, Ledger(sink))
        asyncio.run(generator.run())
    summary = {
        "run_id": generator.run_id,
        "sent": sum(generator.ledger.statuses.values()),
        "statuses": dict(generator.ledger.statuses),
        "max_inflight": generator.max_inflight,
        "skipped": generator.skipped,
        "seconds": round(time.time() - began, 3),
        "inflight": generator.samples,
    }
    if args.summary is not None:
        args.summary.write_text(json.dumps(summary))
    print(json.dumps({k: v for k, v in summary.items() if k != "inflight"}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
