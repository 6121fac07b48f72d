"""Round trips per accepted submission: what the production server asked of PostgreSQL
and of Redis while it took a measured load, counted on their side, so that no probe
weighs on the server.

- PostgreSQL: the transactions of the server's own database (pg_stat_database). The
  store's connections are in autocommit: a statement is one transaction and one round
  trip (a transaction of several statements is more round trips than it counts; one
  statement carrying many commits is one). A backend reports its counts when it goes
  idle, at most once a second and otherwise within PostgreSQL's idle interval of 10 s:
  the counts are read after that long without load.
- Redis: the requests it read (INFO stats, `total_reads_processed`): a command, or a
  pipeline of commands, is one read and one round trip; the commands the server ran
  (INFO commandstats) are kept beside, by name, for a script's call counts each command
  the script ran too. The counters are the whole Redis server's: another client of it
  adds to them, which a quiet machine rules out.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import psycopg
import redis

from bench.storage import redis_client
from bench.wrk import LoadResult

# PostgreSQL's PGSTAT_IDLE_INTERVAL (10 s), and a second to spare.
STATS_SETTLE_S = 11.0
# The reading connection's own SELECT, reported when it closes: once in a delta. And the
# INFO that reads the reads, counted as it is read: once in a delta.
OWN_TRANSACTIONS = 1
OWN_READS = 1


def postgres_transactions(url: str) -> int:
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database"
            " WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


def redis_reads(client: redis.Redis) -> int:
    stats: dict[str, Any] = client.info("stats")
    return int(stats["total_reads_processed"])


def redis_commands(client: redis.Redis) -> Counter[str]:
    """Calls so far by command, less the INFO calls that read them."""
    stats: dict[str, Any] = client.info("commandstats")
    return Counter(
        {
            name.removeprefix("cmdstat_"): int(figures["calls"])
            for name, figures in stats.items()
            if name.startswith("cmdstat_") and name != "cmdstat_info"
        }
    )


def count(
    database_url: str,
    redis_url: str,
    load: Callable[[], LoadResult],
    settle_s: float = STATS_SETTLE_S,
) -> dict[str, Any]:
    """Runs `load` between two readings of each store's counters; the counts per
    accepted submission."""
    time.sleep(settle_s)
    pg_before = postgres_transactions(database_url)
    with redis_client(redis_url) as client:
        commands_before = redis_commands(client)
        reads_before = redis_reads(client)
        result = load()
        reads = redis_reads(client) - reads_before - OWN_READS
        commands = redis_commands(client) - commands_before
    time.sleep(settle_s)
    transactions = postgres_transactions(database_url) - pg_before - OWN_TRANSACTIONS
    accepted = max(result.accepted, 1)
    return {
        "accepted": result.accepted,
        "errors": result.errors,
        "duration_s": round(result.duration_s, 3),
        "postgres_transactions": transactions,
        "redis_round_trips": reads,
        "postgres_per_accepted": round(transactions / accepted, 3),
        "redis_per_accepted": round(reads / accepted, 3),
        "redis_commands_per_accepted": {
            name: round(calls / accepted, 3) for name, calls in commands.most_common()
        },
    }
