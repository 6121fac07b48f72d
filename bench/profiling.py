"""Where a worker's time goes: py-spy samples the running server, and the samples are
added up by component (each sample goes to the innermost frame that names one)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from attrs import frozen

# Matched against a frame's file as py-spy names it (the module's path below
# site-packages or the standard library), innermost frame first: the first frame that
# matches takes the sample, so a driver's own time is the driver's, not its caller's.
COMPONENTS: tuple[tuple[str, str], ...] = (
    ("psycopg (PostgreSQL driver)", r"^(psycopg|psycopg_pool|psycopg_binary)/"),
    ("redis client", r"^redis/"),
    ("logging", r"^logging/|^intake/logs\.py"),
    ("json", r"^json/"),
    ("uvicorn / HTTP parsing", r"^(uvicorn|h11|httptools)/"),
    ("starlette", r"^starlette/"),
    ("anyio", r"^anyio/"),
    ("event loop", r"^(asyncio|uvloop)/|^selectors\.py"),
    ("intake: PostgreSQL adapter", r"^intake/adapters/(postgres/|sql_rows)"),
    ("intake: SQLite adapter (its thread)", r"^intake/adapters/sqlite/|^sqlite3/"),
    ("intake: rate limiter", r"^intake/(adapters|domain)/ratelimit"),
    ("intake: body parsing", r"^intake/(domain/payload|service/body)|^urllib/"),
    ("intake: scoring", r"^intake/domain/scoring|^re/|^sre_"),
    ("intake: validation", r"^intake/domain/validation|^email_validator/"),
    ("intake: HTTP layer", r"^intake/entrypoints/http/"),
    ("intake: pipeline and domain", r"^intake/"),
    ("attrs", r"^attrs?/|^<attrs generated"),
)
_COMPILED = tuple((name, re.compile(pattern)) for name, pattern in COMPONENTS)
_FRAME_FILE = re.compile(r"\(([^()]*?)(?::\d+)?\)$")
OTHER = "other"


@frozen
class Share:
    component: str
    samples: int
    percent: float


def component_of(frame: str) -> str | None:
    match = _FRAME_FILE.search(frame)
    where = match.group(1) if match else frame
    for name, pattern in _COMPILED:
        if pattern.search(where):
            return name
    return None


def summarize(collapsed: str) -> list[Share]:
    """Shares by component of py-spy's raw output (`frame;frame;... count` per line,
    outermost frame first)."""
    counts: Counter[str] = Counter()
    for line in collapsed.splitlines():
        stack, _, number = line.rpartition(" ")
        if not stack or not number.isdigit():
            continue
        frames = stack.split(";")
        owner = OTHER
        for frame in reversed(frames):
            found = component_of(frame)
            if found is not None:
                owner = found
                break
        counts[owner] += int(number)
    total = sum(counts.values())
    return [
        Share(name, samples, round(100 * samples / total, 1))
        for name, samples in counts.most_common()
        if total
    ]


def py_spy() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


def record(pid: int, seconds: float, output: Path, fmt: str) -> subprocess.Popen[bytes]:
    """Starts sampling `pid` for `seconds`; the caller waits for it. Non-blocking: the
    worker is not paused to be read, so the profile costs it little."""
    tool = py_spy()
    if tool is None:
        raise RuntimeError("py-spy is not installed: run make install")
    return subprocess.Popen(
        [
            tool,
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(max(1, round(seconds))),
            "--rate",
            "200",
            "--nonblocking",
            "--format",
            fmt,
            "--output",
            str(output),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
