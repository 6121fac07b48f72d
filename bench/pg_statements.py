"""Where PostgreSQL's time goes per accepted submission: pg_stat_statements, counting
each statement inside the commit function too (`pg_stat_statements.track = all`,
bench/services.py), and the functions' own time, triggers' included
(`track_functions = all`). Read for one database over a measured stretch: reset before,
read after, each figure divided by the submissions accepted meanwhile.

A statement run inside a function counts within its caller's time too (`top` tells the
ones a client sent): the times add up only within one level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

from bench.storage import with_database

TOP = 15  # statements kept, by total time
QUERY_CHARS = 160

_STATEMENTS = """
SELECT s.toplevel, s.calls, s.total_exec_time, s.rows, s.shared_blks_hit,
    s.shared_blks_read, s.shared_blks_dirtied, s.wal_bytes, s.query
FROM pg_stat_statements AS s JOIN pg_database AS d ON d.oid = s.dbid
WHERE d.datname = %s
ORDER BY s.total_exec_time DESC
"""
_FUNCTIONS = """
SELECT schemaname || '.' || funcname, calls, total_time, self_time
FROM pg_stat_user_functions ORDER BY self_time DESC
"""


def available(admin_url: str) -> bool:
    """Whether the server has pg_stat_statements loaded and readable from its admin
    database (the bench's own cluster has; bench/services.py)."""
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'"
        ).fetchone()
        loaded = conn.execute("SHOW shared_preload_libraries").fetchone()
    return bool(row and row[0]) and bool(loaded and "pg_stat_statements" in str(loaded[0]))


def reset(admin_url: str, databases: Sequence[str]) -> None:
    """Zero the statements' counts (every database's) and the functions' of each of
    `databases`."""
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as conn:
        conn.execute("SELECT pg_stat_statements_reset()")
    for database in databases:
        with psycopg.connect(with_database(admin_url, database), autocommit=True) as conn:
            conn.execute("SELECT pg_stat_reset()")


def one_line(query: str, chars: int = QUERY_CHARS) -> str:
    text = " ".join(query.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


def per_accepted(rows: Sequence[Sequence[Any]], accepted: int) -> list[dict[str, Any]]:
    """pg_stat_statements rows (as _STATEMENTS reads them) as figures per accepted
    submission, the largest total time first."""
    n = max(accepted, 1)
    figures = []
    for top, calls, total_ms, count, hit, read, dirtied, wal, query in rows:
        figures.append(
            {
                "top": bool(top),
                "calls": round(int(calls) / n, 3),
                "ms": round(float(total_ms) / n, 4),
                "ms_per_call": round(float(total_ms) / max(int(calls), 1), 4),
                "rows": round(int(count) / n, 3),
                "blocks": round((int(hit) + int(read)) / n, 2),
                "dirtied": round(int(dirtied) / n, 3),
                "wal_bytes": round(float(wal or 0) / n, 1),
                "query": one_line(str(query)),
            }
        )
    return sorted(figures, key=lambda figure: -float(figure["ms"]))


def functions_per_accepted(rows: Sequence[Sequence[Any]], accepted: int) -> list[dict[str, Any]]:
    n = max(accepted, 1)
    return [
        {
            "function": str(name),
            "calls": round(int(calls) / n, 3),
            "total_ms": round(float(total) / n, 4),
            "self_ms": round(float(own) / n, 4),
        }
        for name, calls, total, own in rows
    ]


def read(admin_url: str, database: str, accepted: int) -> dict[str, Any]:
    with psycopg.connect(admin_url, autocommit=True, connect_timeout=5) as conn:
        statements = conn.execute(_STATEMENTS, (database,)).fetchall()
    with psycopg.connect(with_database(admin_url, database), autocommit=True) as conn:
        functions = conn.execute(_FUNCTIONS).fetchall()
    return {
        "accepted": accepted,
        "statements": per_accepted(statements, accepted)[:TOP],
        "functions": functions_per_accepted(functions, accepted),
    }


def lines(profile: Mapping[str, Any], limit: int = 10) -> list[str]:
    """The top statements and functions, one a line, for the printed report."""
    said = [
        f"  {s['ms']:7.4f} ms  {s['calls']:6.2f} calls  {'top ' if s['top'] else 'in  '}"
        f" {s['query'][:100]}"
        for s in profile["statements"][:limit]
    ]
    said += [
        f"  {f['self_ms']:7.4f} ms self ({f['total_ms']:.4f} total) {f['calls']:5.2f} calls"
        f"  {f['function']}"
        for f in profile["functions"][:limit]
    ]
    return said
