"""The bench's own PostgreSQL database and Redis keys, and the workspace and form it
submits to.

Everything is made for the run and removed after it: a database `intake_bench_<random>`
on the shared server, and in Redis database 14 only the rate-limit windows of the run's
own form (their keys carry its form id). The bulk prefill of stored rows is in
bench/prefill.py, the storage ceiling in bench/storage_ceiling.py.
"""

from __future__ import annotations

import json
import secrets
import subprocess
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import redis
from attrs import frozen
from psycopg import sql

from intake.adapters.ratelimit_redis import DEFAULT_PREFIX

# The bench's workspace never meets its quota: the largest limit the column holds.
MONTHLY_LIMIT = 2_000_000_000


class StorageError(RuntimeError):
    """PostgreSQL or Redis is not there, or refused what the bench needs."""


def with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def where(url: str) -> str:
    """Host and port only: a URL may carry a password."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or ''}"


class BenchDatabase:
    """A database of the run's own on the shared server, dropped at the end."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.name = f"intake_bench_{secrets.token_hex(6)}"
        self.url = with_database(admin_url, self.name)
        self._created = False

    def create(self) -> None:
        try:
            with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as conn:
                conn.execute(
                    sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(
                        sql.Identifier(self.name)
                    )
                )
        except psycopg.Error as error:
            raise StorageError(
                f"cannot create a database on PostgreSQL at {where(self.admin_url)}: {error}"
            ) from error
        self._created = True

    def drop(self) -> None:
        if not self._created:
            return
        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.name))
            )
        self._created = False

    def count_submissions(self) -> int:
        with psycopg.connect(self.url, autocommit=True) as conn:
            row = conn.execute("SELECT count(*) FROM submissions").fetchone()
        return int(row[0]) if row else 0

    def statuses(self) -> dict[str, int]:
        with psycopg.connect(self.url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT status, count(*) FROM submissions GROUP BY status"
            ).fetchall()
        return {str(status): int(count) for status, count in rows}

    def settle(self) -> None:
        """After a bulk load: the statistics and visibility map a database that grew
        slowly would have, and a checkpoint, so that neither autovacuum nor the next
        checkpoint's full-page writes fall into a measurement."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            for table in ("submissions", "outbox", "idempotency", "monthly_usage"):
                conn.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(table)))
            conn.execute("CHECKPOINT")


def redis_client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=10)


def check_redis(url: str) -> None:
    try:
        with redis_client(url) as client:
            client.ping()
    except (redis.RedisError, OSError) as error:
        raise StorageError(f"Redis is not reachable at {where(url)}: {error}") from error


def clear_rate_limits(url: str, form_id: str) -> int:
    """Deletes the run's own windows: every key of intake's prefix that names its form."""
    removed = 0
    with redis_client(url) as client:
        batch: list[bytes] = []
        for key in client.scan_iter(match=f"{DEFAULT_PREFIX}*{{{form_id}}}*", count=5000):
            batch.append(key)
            if len(batch) >= 5000:
                removed += int(client.unlink(*batch))
                batch.clear()
        if batch:
            removed += int(client.unlink(*batch))
    return removed


# The workspace and form, made with the `intake` command as an operator would


@frozen
class Target:
    workspace_id: str
    form_id: str
    public_form_key: str

    @property
    def path(self) -> str:
        return f"/f/{self.public_form_key}"


def intake(intake_script: str, env: Mapping[str, str], *argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [intake_script, *argv, "--json"],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise StorageError(f"intake {' '.join(argv)} failed: {done.stderr.strip()}")
    document = json.loads(done.stdout)
    if not isinstance(document, dict):
        raise StorageError(f"intake {' '.join(argv)} printed {done.stdout!r}")
    return document


def provision(intake_script: str, env: Mapping[str, str]) -> Target:
    intake(intake_script, env, "migrate")
    workspace = intake(
        intake_script, env,
        "workspace", "create", "--name", "bench", "--plan", "business",
        "--monthly-limit", str(MONTHLY_LIMIT),
    )  # fmt: skip
    workspace_id = str(workspace["workspace_id"])
    form = intake(intake_script, env, "form", "create", "--workspace", workspace_id)
    return Target(workspace_id, str(form["form_id"]), str(form["public_form_key"]))
