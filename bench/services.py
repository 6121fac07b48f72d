"""The bench's own PostgreSQL cluster and Redis server, each in a temporary directory on
a free port, stopped and removed at the end.

Its own cluster loads pg_stat_statements (which needs shared_preload_libraries, a
server-wide setting no one else's server should be restarted for) and counts each
statement inside the commit function (`pg_stat_statements.track = all`) and each
function's own time (`track_functions = all`): where the commit's time goes. Its own
Redis and cluster also serve no one else, so the CPU their processes spend is the run's.
Otherwise the settings are initdb's defaults, as a packaged server has them.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import psycopg
import redis
from attrs import evolve, frozen

from bench.options import Options
from bench.servers import free_port

OWNER = "postgres"  # initdb and postgres refuse to run as root: as root, they run as it
TIMEOUT = 60.0
SETTINGS = (
    "shared_preload_libraries=pg_stat_statements",
    "pg_stat_statements.track=all",
    "track_functions=all",
    "listen_addresses=127.0.0.1",
    "max_connections=300",
)


class ServicesError(RuntimeError):
    """The bench's own PostgreSQL or Redis could not start."""


@frozen
class Services:
    admin_url: str
    redis_url: str
    # Whether pg_stat_statements is there to read (the bench's own cluster).
    statements: bool


def _bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def _as_owner() -> list[str]:
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(OWNER)
    except KeyError as error:
        raise ServicesError(f"PostgreSQL cannot run as root and there is no {OWNER!r}") from error
    runuser = shutil.which("runuser")
    if runuser is None:
        raise ServicesError("running PostgreSQL as root needs runuser")
    return [runuser, "-u", OWNER, "--"]


def _run(argv: Sequence[str], cwd: Path) -> None:
    done = subprocess.run(
        [*_as_owner(), *argv], cwd=cwd, capture_output=True, text=True,
        timeout=TIMEOUT, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise ServicesError(f"{Path(argv[0]).name} failed: {done.stderr or done.stdout}")


@contextlib.contextmanager
def own_postgres() -> Iterator[str]:
    """A new cluster's admin URL, with pg_stat_statements created in its `postgres`."""
    bindir = _bindir()
    if bindir is None:
        raise ServicesError("PostgreSQL's server binaries (initdb, pg_ctl) are not installed")
    root = Path(tempfile.mkdtemp(prefix="intake-bench-pg-"))
    data, port = root / "data", free_port()
    if os.geteuid() == 0:
        shutil.chown(root, user=OWNER, group=OWNER)
    started = False
    try:
        _run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
              "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"], root)  # fmt: skip
        options = " ".join([f"-c port={port}", f"-c unix_socket_directories={root}"])
        options += "".join(f" -c {setting}" for setting in SETTINGS)
        _run([str(bindir / "pg_ctl"), "start", "-D", str(data), "-l", str(root / "log"),
              "-w", "-t", str(int(TIMEOUT)), "-o", options], root)  # fmt: skip
        started = True
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        yield url
    finally:
        if started:
            with contextlib.suppress(ServicesError, subprocess.TimeoutExpired):
                _run([str(bindir / "pg_ctl"), "stop", "-D", str(data), "-m", "immediate"], root)
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def own_redis() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise ServicesError("redis-server is not installed")
    root = Path(tempfile.mkdtemp(prefix="intake-bench-redis-"))
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
         "no", "--dir", str(root), "--logfile", str(root / "log"), "--daemonize", "no"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                with redis.Redis.from_url(url, socket_timeout=2) as client:
                    client.ping()
                break
            except redis.RedisError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise ServicesError("redis-server did not start") from None
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def services(admin_url: str | None, redis_url: str | None) -> Iterator[Services]:
    """The servers the caller named, or the bench's own for each it did not."""
    with contextlib.ExitStack() as stack:
        pg = admin_url or stack.enter_context(own_postgres())
        cache = redis_url or stack.enter_context(own_redis())
        yield Services(pg, cache, statements=admin_url is None)


def started(options: Options, stack: contextlib.ExitStack) -> Options:
    """`options` with the servers to use, the bench's own started (and stopped when
    `stack` closes) for each it does not name."""
    own = stack.enter_context(services(options.admin_url, options.redis_url))
    return evolve(options, admin_url=own.admin_url, redis_url=own.redis_url)
