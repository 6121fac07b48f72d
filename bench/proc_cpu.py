"""CPU time of processes, read from /proc: what a server, its PostgreSQL backends and
Redis spent while the bench loaded it, each apart.

A process's /proc/<pid>/stat holds its user and system time (utime, stime) in clock
ticks, its threads' included. A process that ended meanwhile is gone from /proc: its
time is lost, which the bench avoids by reading long-lived processes (a server's workers,
a pool's backends, Redis).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from attrs import frozen

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PROC = Path("/proc")
# Fields after the command's closing parenthesis: state is 0, ppid 1, utime 11, stime 12.
_PPID, _UTIME, _STIME = 1, 11, 12


@frozen
class Stat:
    ppid: int
    cpu_s: float  # user + system, in seconds


def parse_stat(text: str, ticks: int = CLOCK_TICKS) -> Stat:
    """One /proc/<pid>/stat line. The command (between parentheses) may hold spaces and
    parentheses itself: the fields are read after its last closing one."""
    fields = text.rpartition(")")[2].split()
    return Stat(ppid=int(fields[_PPID]), cpu_s=(int(fields[_UTIME]) + int(fields[_STIME])) / ticks)


def stat_of(pid: int, proc: Path = PROC) -> Stat | None:
    try:
        return parse_stat((proc / str(pid) / "stat").read_text())
    except (OSError, IndexError, ValueError):
        return None  # gone meanwhile


def cpu_seconds(pids: Iterable[int], proc: Path = PROC) -> dict[int, float]:
    """Each living process's CPU time so far."""
    found: dict[int, float] = {}
    for pid in pids:
        stat = stat_of(pid, proc)
        if stat is not None:
            found[pid] = stat.cpu_s
    return found


def children(proc: Path = PROC) -> dict[int, list[int]]:
    """Every process's children, by parent."""
    tree: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        stat = stat_of(int(entry.name), proc)
        if stat is not None:
            tree.setdefault(stat.ppid, []).append(int(entry.name))
    return tree


def family(pid: int, proc: Path = PROC) -> list[int]:
    """A process and all its descendants."""
    tree = children(proc)
    found: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(tree.get(current, []))
    return found


def spent(before: Mapping[int, float], after: Mapping[int, float]) -> float:
    """CPU seconds used between two readings by the processes of the second (one started
    meanwhile counts from zero)."""
    return sum(max(0.0, seconds - before.get(pid, 0.0)) for pid, seconds in after.items())


def machine_busy_seconds(proc: Path = PROC, ticks: int = CLOCK_TICKS) -> float:
    """CPU seconds every core has spent busy since boot (/proc/stat's first line: all but
    idle and iowait)."""
    fields = (proc / "stat").read_text().splitlines()[0].split()[1:]
    values = [int(value) for value in fields]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    # guest time is counted within user time already.
    return (sum(values[:8]) - idle) / ticks
