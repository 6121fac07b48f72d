"""CPU per accepted submission of every process that serves one: the server's own
(its workers, and the process that started them), PostgreSQL's (the backends connected
to the server's database, and the cluster's processes that serve no one database: the
WAL writer, the checkpointer, the background writer...), and Redis's, read from /proc
around each measured run (bench/proc_cpu.py).

Only one server is under load at a time, so the cluster's shared processes and Redis
work for it then; the idle servers' backends are not counted (their database is not
the one measured). The whole machine's busy time over the same run is kept beside: it
holds wrk's share and everyone else's too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg
from attrs import define, field, frozen

from bench import proc_cpu
from bench.servers import Server
from bench.storage import redis_client

GROUPS = ("worker", "postgres", "redis")

# The backends serving `database` and the cluster's processes serving none, but not the
# meter's own backend.
_PROCESSES = (
    "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
    " AND (datname = %s OR datname IS NULL)"
)


@frozen
class Reading:
    processes: Mapping[str, Mapping[int, float]]
    machine_s: float


@define
class Spent:
    """CPU seconds of each group of processes, and of the machine, added up over runs."""

    seconds: dict[str, float] = field(factory=lambda: dict.fromkeys(GROUPS, 0.0))
    machine_s: float = 0.0

    def add(self, before: Reading, after: Reading) -> None:
        for group in GROUPS:
            self.seconds[group] += proc_cpu.spent(
                before.processes.get(group, {}), after.processes.get(group, {})
            )
        self.machine_s += after.machine_s - before.machine_s

    def per_accepted_ms(self, accepted: int) -> dict[str, float]:
        """Milliseconds of CPU per accepted submission, by group, their sum (`service`)
        and the machine's."""
        n = max(accepted, 1)
        figures = {group: self.seconds[group] * 1000 / n for group in GROUPS}
        figures["service"] = sum(figures.values())
        figures["machine"] = self.machine_s * 1000 / n
        return {name: round(value, 4) for name, value in figures.items()}


class CpuMeter:
    """Reads, for one server, its processes' CPU time and those of its stores."""

    def __init__(self, admin_url: str, redis_url: str) -> None:
        self._conn = psycopg.connect(admin_url, autocommit=True, connect_timeout=5)
        with redis_client(redis_url) as client:
            info: dict[str, Any] = client.info("server")
        self._redis_pid = int(info["process_id"])

    def close(self) -> None:
        self._conn.close()

    def postgres_pids(self, database: str) -> list[int]:
        pids = [int(row[0]) for row in self._conn.execute(_PROCESSES, (database,)).fetchall()]
        # The postmaster, which forks every backend: the parent of any of them.
        parents = {stat.ppid for pid in pids if (stat := proc_cpu.stat_of(pid)) is not None}
        return [*pids, *parents]

    def read(self, server: Server, database: str | None) -> Reading:
        processes: dict[str, dict[int, float]] = {
            "worker": proc_cpu.cpu_seconds(proc_cpu.family(server.process.pid)),
        }
        if database is not None:
            processes["postgres"] = proc_cpu.cpu_seconds(self.postgres_pids(database))
            processes["redis"] = proc_cpu.cpu_seconds([self._redis_pid])
        return Reading(processes, proc_cpu.machine_busy_seconds())
