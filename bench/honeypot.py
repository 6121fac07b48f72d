"""`python -m bench.honeypot [--rounds N]`: how long a filled honeypot takes to be
answered next to a real submission, on the embedded SQLite store.

A bot must not tell that it was caught by the time its answer takes any more than by
the answer itself. The two kinds of request are sent alternately to the same
pipeline, over a SQLite database in a temporary folder (the production pragmas: WAL,
synchronous FULL), one at a time, and the medians are printed side by side. The HTTP
layer, the same for both, is left out so that the difference shows clearly.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from intake.adapters.memory.challenge import FakeChallengeVerifier
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.sqlite import open_sqlite_store
from intake.adapters.system import SecureIdSource, SystemClock
from intake.domain.model import FieldValue
from intake.domain.ratelimit import RateLimits, RateRule
from intake.service.admin import owner_services
from intake.service.messages import Accepted, FieldsBody, PublicTarget, SubmitRequest
from intake.service.pipeline import PipelineSettings, SubmissionPipeline

FIELDS: dict[str, FieldValue] = {
    "name": "Ada Lovelace",
    "email": "ada@example.com",
    "message": "Hello, I would like to know more about your services.",
}
WARMUP = 50
# Never in the way of the bench: the windows are not what is measured.
_UNLIMITED = RateRule(10**9, 1)


async def _measure(folder: Path, rounds: int) -> dict[str, list[float]]:
    store = await open_sqlite_store(f"sqlite:///{folder / 'intake.db'}")
    try:
        clock, ids = SystemClock(), SecureIdSource()
        services = owner_services(store, clock, ids)
        workspace = await services.workspaces.create("Bench", monthly_limit=2_000_000_000)
        form = await services.forms.create(workspace.workspace_id)
        limits = RateLimits(*([_UNLIMITED] * 5))
        pipeline = SubmissionPipeline(
            store=store,
            rate_limiter=InProcessRateLimiter(),
            challenge=FakeChallengeVerifier(),
            clock=clock,
            id_source=ids,
            settings=PipelineSettings(rate_limits=limits),
        )
        kinds = {
            "real": FieldsBody(FIELDS),
            "honeypot": FieldsBody({**FIELDS, "_gotcha": "https://spam.example"}),
        }
        times: dict[str, list[float]] = {kind: [] for kind in kinds}
        for n in range(WARMUP + rounds):
            for kind, body in kinds.items():
                request = SubmitRequest(PublicTarget(form.public_form_key), body, "192.0.2.7")
                started = time.perf_counter()
                outcome = await pipeline.submit(request)
                elapsed = time.perf_counter() - started
                if not isinstance(outcome, Accepted):
                    raise RuntimeError(f"a {kind} submission was refused: {outcome}")
                if n >= WARMUP:
                    times[kind].append(elapsed * 1000)
        return times
    finally:
        await store.close()


def _figure(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[int(len(ordered) * 0.9)]
    return f"median {statistics.median(values):.3f} ms, p90 {p90:.3f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.honeypot", description=__doc__)
    parser.add_argument("--rounds", type=int, default=500, help="requests of each kind")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="intake-bench-honeypot-") as folder:
        times = asyncio.run(_measure(Path(folder), args.rounds))
    real, honeypot = times["real"], times["honeypot"]
    print(f"SQLite, {args.rounds} requests of each kind, one at a time")
    print(f"  real submission:  {_figure(real)}")
    print(f"  filled honeypot:  {_figure(honeypot)}")
    ratio = statistics.median(honeypot) / statistics.median(real)
    print(f"  honeypot / real (medians): {ratio:.2f}")
    # 50 % when a bot cannot tell the two apart by time; 0 % when none overlaps.
    slower = sum(t > statistics.median(real) for t in honeypot) / len(honeypot)
    print(f"  honeypot answers slower than the real median: {slower:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
