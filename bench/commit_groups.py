"""`python -m bench.commit_groups`: what a group commit's transaction costs PostgreSQL
per commit, by the statement it is sent as and the size of the group, by A/B.

On a database of the bench's own cluster, one connection sends groups of the bench's
submission through the group commit's statements, as a worker sends them under load:
`rows` (intake_commit for each, commit_batch.BATCH) and `many` (intake_commit_many for
all, commit_batch.MANY), each `@N` commits a transaction (`many@16`). The variants take
turns, their order turning each round, so that other work on the machine weighs on all
alike; each turn's figure is the cluster's CPU per commit (/proc: the committing backend
and the processes that serve every database, the WAL writer's flushes among them).
The commits wait for their flush, as the service's do.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path

import psycopg

from bench.commit_parts import cluster_cpu, fresh_commit
from bench.options import parse
from bench.run import Bench
from bench.services import started
from bench.storage_ceiling import commit_arguments
from bench.wrk import FORM_BODY
from intake.adapters.postgres import commit_batch
from intake.adapters.sql_rows import Params

STATEMENTS = {"rows": commit_batch.BATCH, "many": commit_batch.MANY}


def group(arguments: Mapping[str, object], size: int) -> str:
    """`size` commits of the bench's submission, fresh ids each, as the array sent."""
    items: list[Params] = [fresh_commit(arguments) for _ in range(size)]
    return commit_batch.as_json(commit_batch.counted(items))


def turn(
    conn: psycopg.Connection[tuple[object, ...]],
    variant: str,
    arguments: Mapping[str, object],
    commits: int,
) -> float:
    """The cluster's CPU milliseconds per commit over about `commits` commits."""
    name, _, size_text = variant.partition("@")
    size = int(size_text or 8)
    groups = max(1, commits // size)
    before = cluster_cpu(conn)
    for _ in range(groups):
        rows = conn.execute(STATEMENTS[name], (group(arguments, size),), prepare=True).fetchall()
        if any(row[0] != "committed" for row in rows):
            raise RuntimeError(f"a commit of the bench's submission answered {rows}")
    return (cluster_cpu(conn) - before) * 1000 / (groups * size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "variants", nargs="*", default=["rows@8", "many@8"], help="default: rows@8 many@8"
    )
    parser.add_argument("--commits", type=int, default=2400, help="per turn (default 2400)")
    parser.add_argument("--rounds", type=int, default=6, help="turns of each (default 6)")
    args = parser.parse_args()
    unknown = [v for v in args.variants if v.partition("@")[0] not in STATEMENTS]
    if unknown:
        parser.error(f"unknown variants {unknown}: each is rows or many, then @N")
    with ExitStack() as stack:
        options = started(parse([]), stack)
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="groups-")))
        database, target = Bench(options, stack, workdir).database({}, "groups")
        arguments = commit_arguments(target, FORM_BODY)
        with psycopg.connect(database.url, autocommit=True) as conn:
            for variant in args.variants:
                turn(conn, variant, arguments, args.commits)  # warm-up
            spent: dict[str, list[float]] = {v: [] for v in args.variants}
            for round_ in range(args.rounds):
                order = args.variants if round_ % 2 == 0 else args.variants[::-1]
                for variant in order:
                    spent[variant].append(turn(conn, variant, arguments, args.commits))
            for variant, figures in spent.items():
                print(
                    f"{variant:>10}: {statistics.median(figures):.4f} ms of the cluster's CPU"
                    f" a commit (median; {min(figures):.4f} to {max(figures):.4f})"
                )


if __name__ == "__main__":
    main()
