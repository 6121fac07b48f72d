"""`python -m bench.stage_probe FILE intake-arguments...`: `intake` with timers on the
stages of a submission, to tell where a request waits (`python -m bench.cpu_cost
--stages`). The timers are the bench's, wrapped around intake's own functions in this
process only: the product runs as it is, one worker (it serves in this process).

Stages, in milliseconds, each request or batch one sample:
- `server`: from the first byte of the request parsed to its answer written;
- `pipeline`: the submission pipeline's whole run (the handler's work);
- `before_commit`, `commit`, `after_commit`: its parts around the store's commit;
- `queue:<batch>`: waiting in a group (the commits', the rate limiter's) for the batch
  in flight to come back, before its own goes; `round_trip:<batch>`: a batch's round
  trip; `size:<batch>`: the calls it carried (a count, not milliseconds).

SIGUSR1 forgets what was recorded (after a warm-up); SIGUSR2 writes the figures of what
was recorded since to FILE as JSON.
"""

from __future__ import annotations

import contextvars
import functools
import json
import signal
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

PERCENTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))
# Histogram bucket upper bounds, in milliseconds (counts: the calls a batch carried).
EDGES = (0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, float("inf"))

_samples: dict[str, list[float]] = defaultdict(list)
_marks: contextvars.ContextVar[dict[str, float] | None] = contextvars.ContextVar(
    "stage_marks", default=None
)
_queued: dict[int, float] = {}


def summary(samples: Sequence[float]) -> dict[str, Any]:
    """Count, mean, percentiles, max, and the histogram over EDGES."""
    ordered = sorted(samples)
    n = len(ordered)
    if n == 0:
        return {"count": 0}
    figures: dict[str, Any] = {"count": n, "mean": round(sum(ordered) / n, 3)}
    for name, share in PERCENTILES:
        figures[name] = round(ordered[min(n - 1, int(share * n))], 3)
    figures["max"] = round(ordered[-1], 3)
    counts = [0] * len(EDGES)
    for value in ordered:
        counts[next(i for i, edge in enumerate(EDGES) if value <= edge)] += 1
    figures["histogram"] = {f"<={edge:g}": c for edge, c in zip(EDGES, counts, strict=True) if c}
    return figures


def _add(stage: str, seconds: float, scale: float = 1000.0) -> None:
    _samples[stage].append(seconds * scale)


def _wrap_pipeline() -> None:
    from intake.service.pipeline import SubmissionPipeline  # noqa: PLC0415

    submit, commit = SubmissionPipeline.submit, SubmissionPipeline._commit

    @functools.wraps(submit)
    async def timed_submit(self: Any, request: Any) -> Any:
        marks = {"start": time.perf_counter()}
        _marks.set(marks)
        outcome = await submit(self, request)
        end = time.perf_counter()
        _add("pipeline", end - marks["start"])
        if "commit_end" in marks:
            _add("before_commit", marks["commit_start"] - marks["start"])
            _add("commit", marks["commit_end"] - marks["commit_start"])
            _add("after_commit", end - marks["commit_end"])
        return outcome

    @functools.wraps(commit)
    async def timed_commit(self: Any, *args: Any, **kwargs: Any) -> Any:
        marks = _marks.get()
        if marks is not None:
            marks["commit_start"] = time.perf_counter()
        result = await commit(self, *args, **kwargs)
        if marks is not None:
            marks["commit_end"] = time.perf_counter()
        return result

    SubmissionPipeline.submit = timed_submit  # type: ignore[method-assign]
    SubmissionPipeline._commit = timed_commit  # type: ignore[method-assign]


def _wrap_batches() -> None:
    from intake.adapters.coalescing import Coalescer  # noqa: PLC0415

    call, settle = Coalescer.call, Coalescer._settle

    @functools.wraps(call)
    async def timed_call(self: Any, item: Any, **kwargs: Any) -> Any:
        _queued[id(item)] = time.perf_counter()
        return await call(self, item, **kwargs)

    @functools.wraps(settle)
    async def timed_settle(self: Any, batch: list[tuple[Any, Any]]) -> None:
        name = getattr(self._run, "__name__", "batch").strip("_")
        sent = time.perf_counter()
        for item, _ in batch:
            queued = _queued.pop(id(item), None)
            if queued is not None:
                _add(f"queue:{name}", sent - queued)
        _add(f"size:{name}", len(batch), scale=1.0)
        await settle(self, batch)
        _add(f"round_trip:{name}", time.perf_counter() - sent)

    Coalescer.call = timed_call  # type: ignore[method-assign]
    Coalescer._settle = timed_settle  # type: ignore[method-assign]


def _wrap_protocol() -> None:
    from intake.entrypoints.http.httptools_protocol import (  # noqa: PLC0415
        IntakeHttpToolsProtocol as Protocol,
    )

    begin, complete = Protocol.on_message_begin, Protocol.on_response_complete
    began: dict[int, float] = {}

    def timed_begin(self: Any) -> None:
        began[id(self)] = time.perf_counter()
        begin(self)

    def timed_complete(self: Any) -> None:
        started = began.pop(id(self), None)
        if started is not None:
            _add("server", time.perf_counter() - started)
        complete(self)

    Protocol.on_message_begin = timed_begin  # type: ignore[method-assign]
    Protocol.on_response_complete = timed_complete  # type: ignore[method-assign]


def _on_signals(path: Path) -> None:
    def forget(_signum: int, _frame: FrameType | None) -> None:
        _samples.clear()

    def write(_signum: int, _frame: FrameType | None) -> None:
        figures = {stage: summary(values) for stage, values in sorted(_samples.items())}
        path.write_text(json.dumps(figures, indent=1) + "\n")

    signal.signal(signal.SIGUSR1, forget)
    signal.signal(signal.SIGUSR2, write)


def main(argv: Sequence[str], run: Callable[[list[str]], int] | None = None) -> int:
    path, *arguments = argv
    _on_signals(Path(path))
    _wrap_pipeline()
    _wrap_batches()
    _wrap_protocol()
    if run is not None:
        return run(list(arguments))
    from intake.entrypoints.cli import main as intake  # noqa: PLC0415

    return intake(list(arguments))


def lines(figures: dict[str, Any]) -> list[str]:
    """One line a stage, for the printed report."""
    said = []
    for stage, figure in figures.items():
        if figure.get("count"):
            unit = "" if stage.startswith("size:") else " ms"
            cells = "  ".join(f"{name} {figure[name]:g}{unit}" for name, _ in PERCENTILES)
            said.append(f"  {stage:24} n {figure['count']:6}  {cells}  max {figure['max']:g}")
    return said


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
