"""What else the machine was doing: a benchmark on a shared machine says how busy it was,
so that its figures can be read for what they are."""

from __future__ import annotations

import os
import platform
import time
from typing import Any

import psutil

# Servers the bench drives: their CPU is part of the work being measured, whoever else
# also uses them.
SERVICES = frozenset({"postgres", "postmaster", "redis-server"})


def _cpu_times() -> dict[int, tuple[str, float]]:
    seen: dict[int, tuple[str, float]] = {}
    for process in psutil.process_iter(["name", "cpu_times"]):
        times = process.info.get("cpu_times")
        if times is None:
            continue
        seen[process.pid] = (process.info.get("name") or "", times.user + times.system)
    return seen


def _ours() -> set[int]:
    me = psutil.Process()
    return {me.pid, *(child.pid for child in me.children(recursive=True))}


class Watch:
    """CPU used during a phase by the bench's own processes, by the services it drives,
    and by everything else (other users of the machine), in cores."""

    def __init__(self) -> None:
        self._before = _cpu_times()
        self._started = time.monotonic()

    def finish(self) -> dict[str, float]:
        after = _cpu_times()
        elapsed = max(time.monotonic() - self._started, 1e-6)
        ours = _ours()
        used = {"bench": 0.0, "services": 0.0, "others": 0.0}
        for pid, (name, seconds) in after.items():
            spent = seconds - self._before.get(pid, (name, 0.0))[1]
            if pid in ours:
                used["bench"] += spent
            elif name in SERVICES:
                used["services"] += spent
            else:
                used["others"] += spent
        return {kind: round(seconds / elapsed, 2) for kind, seconds in used.items()}


def describe() -> dict[str, Any]:
    one, five, fifteen = os.getloadavg()
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average": [round(one, 2), round(five, 2), round(fifteen, 2)],
        "memory_gb": round(psutil.virtual_memory().total / 1e9, 1),
    }
