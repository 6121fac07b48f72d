"""`python -m bench.commit_parts`: what each index, trigger, foreign key and the
generated search column of the commit's tables costs a commit, by A/B.

pg_stat_statements tells each statement's time, but not what part of an INSERT goes to
each index or constraint. So, on a database of the bench's own cluster, one connection
runs the service's commit statement a fixed number of times with everything in place,
then with one part removed, then again in place, turn by turn; each part's cost is what
removing it saved in the cluster's CPU per commit (/proc: the committing backend and
the processes serving every database), against the median of the turns with everything
in place. Parts are put back after their turn; the generated column, which cannot be,
goes last (its values are then null, which its trigram index then skips too).
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from attrs import frozen

from bench import proc_cpu
from bench.options import parse
from bench.prefill import fast_time_sorted_id
from bench.run import Bench
from bench.services import started
from bench.storage_ceiling import commit_arguments
from bench.wrk import FORM_BODY
from intake.adapters.postgres.submissions import _COMMIT as COMMIT_STATEMENT

TABLES = ("submissions", "outbox", "idempotency", "monthly_usage_shards")
SEARCH_COLUMN = "ALTER TABLE submissions ALTER COLUMN search_text DROP EXPRESSION IF EXISTS"


@frozen
class Part:
    name: str
    remove: str
    restore: str | None


def parts(conn: psycopg.Connection[tuple[object, ...]]) -> list[Part]:
    """Every secondary index, foreign key and trigger of the commit's tables, and the
    generated search column last."""
    found: list[Part] = []
    indexes = conn.execute(
        "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)"
        " FROM pg_index AS i WHERE i.indrelid::regclass::text = ANY(%s)"
        " AND NOT i.indisprimary ORDER BY 1",
        (list(TABLES),),
    ).fetchall()
    found += [Part(f"index {n}", f"DROP INDEX {n}", str(d)) for n, d in indexes]
    keys = conn.execute(
        "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid)"
        " FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text = ANY(%s)"
        " ORDER BY 1, 2",
        (list(TABLES),),
    ).fetchall()
    found += [
        Part(
            f"foreign key {t}.{c}",
            f"ALTER TABLE {t} DROP CONSTRAINT {c}",
            f"ALTER TABLE {t} ADD CONSTRAINT {c} {d} NOT VALID",
        )
        for t, c, d in keys
    ]
    triggers = conn.execute(
        "SELECT tgrelid::regclass::text, tgname FROM pg_trigger WHERE NOT tgisinternal"
        " AND tgrelid::regclass::text = ANY(%s) ORDER BY 1, 2",
        (list(TABLES),),
    ).fetchall()
    found += [
        Part(
            f"trigger {t}.{n}",
            f"ALTER TABLE {t} DISABLE TRIGGER {n}",
            f"ALTER TABLE {t} ENABLE TRIGGER {n}",
        )
        for t, n in triggers
    ]
    found.append(Part("generated column submissions.search_text", SEARCH_COLUMN, None))
    return found


def cluster_cpu(conn: psycopg.Connection[tuple[object, ...]]) -> float:
    """CPU seconds so far of the cluster's processes: `conn`'s backend, which runs the
    commits, and those that serve every database (WAL writer, checkpointer...)."""
    rows = conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname IS NULL OR pid = pg_backend_pid()"
    ).fetchall()
    return sum(proc_cpu.cpu_seconds(int(str(row[0])) for row in rows).values())


def fresh_commit(arguments: Mapping[str, object]) -> dict[str, object]:
    """The bench's submission as a commit's parameters, with ids and times of its own."""
    now = datetime.now(UTC)
    ms = int(now.timestamp() * 1000)
    params = dict(arguments)
    params["submission_id"] = params["event_submission_id"] = fast_time_sorted_id(
        "sub", ms, secrets.token_bytes(12)
    )
    params["event_id"] = fast_time_sorted_id("evt", ms, secrets.token_bytes(16))
    params["created_at"] = params["event_created_at"] = now
    return params


def commit_cost(
    conn: psycopg.Connection[tuple[object, ...]], arguments: Mapping[str, object], commits: int
) -> float:
    """The cluster's CPU milliseconds per commit over `commits` commits of `conn`'s. The
    commits do not wait for their flush to disk (the WAL writer's work, counted), so
    that a turn takes a second, not a minute."""
    before = cluster_cpu(conn)
    for _ in range(commits):
        conn.execute(COMMIT_STATEMENT, fresh_commit(arguments), prepare=True)
    return (cluster_cpu(conn) - before) * 1000 / commits


def saving(with_all: Sequence[float], without: Sequence[float]) -> float:
    """What removing a part saved: the median turn with everything in place less the
    median turn without it."""
    return statistics.median(with_all) - statistics.median(without)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=3000, help="per turn (default 3000)")
    parser.add_argument(
        "--repeats", type=int, default=1, help="turns without each part (default 1)"
    )
    args = parser.parse_args()
    with ExitStack() as stack:
        options = started(parse([]), stack)
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="parts-")))
        bench = Bench(options, stack, workdir)
        database, target = bench.database({}, "parts")
        arguments = commit_arguments(target, FORM_BODY)
        with (
            psycopg.connect(database.url, autocommit=True) as conn,
            psycopg.connect(database.url, autocommit=True) as committer,
        ):
            committer.execute("SET synchronous_commit = off")

            def cost() -> float:
                return commit_cost(committer, arguments, args.commits)

            cost()  # warm-up
            everything = [cost()]
            print(f"everything in place: {everything[0]:.4f} ms of the cluster's CPU a commit")
            for part in parts(conn):
                without: list[float] = []
                if part.restore is None:
                    conn.execute(part.remove)  # for good: every turn after is without it
                for _ in range(max(1, args.repeats)):
                    if part.restore is None:
                        without.append(cost())
                        continue
                    conn.execute(part.remove)
                    without.append(cost())
                    conn.execute(part.restore)
                    everything.append(cost())
                print(
                    f"{saving(everything, without):+8.4f} ms a commit without {part.name}"
                    f" ({statistics.median(without):.4f} against"
                    f" {statistics.median(everything):.4f})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
