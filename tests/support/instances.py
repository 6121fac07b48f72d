"""Private PostgreSQL and Redis servers that a test may stop, restart and kill.

Never the shared servers on 5432 and 6379: each instance lives in a temporary directory
of its own and listens on a free port on 127.0.0.1 only. PostgreSQL runs with fsync on
(durability is what the fault tests look at) and trust authentication; initdb and
postgres refuse to run as root, so as root they run as the `postgres` user, with the
directory handed to it. Everything is stopped and removed on the way out, even when the
test fails. A missing binary is `unavailable(...)`: a skip, or a failure in CI.

    with private_postgres() as pg, private_redis() as redis:
        pg.stop()            # pg_ctl stop -m fast
        pg.start()           # the same port and data directory
        pg.kill()            # SIGKILL to the postmaster and every backend
        redis.kill(); redis.start()
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import psycopg
import redis
from psycopg import sql

from tests.conftest import unavailable
from tests.support.processes import free_port

OWNER = "postgres"  # the OS user PostgreSQL runs as when we are root
START_TIMEOUT = 60.0  # a busy machine can take a while to replay WAL after a kill
STOP_TIMEOUT = 60.0
LOG_TAIL = 30


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return "(no log)"
    return "\n".join(lines[-LOG_TAIL:])


def _alive(pid: int) -> bool:
    """True until the process is reaped: PostgreSQL refuses to start while the pid in
    its lock file exists, even as a zombie waiting for init."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    return True


def _children(pid: int) -> list[int]:
    """Direct children, from /proc (each backend of PostgreSQL is a session leader of
    its own, so a process group would not catch them)."""
    found: list[int] = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # gone meanwhile
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _stopped(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True  # gone: it forks nothing more
    return state in {"T", "t", "Z", "X"}


def _freeze(pid: int) -> None:
    """SIGSTOP and wait until it takes hold: a postmaster under load forks a backend
    per connection, and one forked after the children are listed would outlive the
    kill and hold the shared memory that the next start needs."""
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + 5
    while not _stopped(pid) and time.monotonic() < deadline:
        time.sleep(0.005)


def _kill_tree(pid: int) -> None:
    """SIGKILL a process and every descendant, and wait for them to be gone."""
    _freeze(pid)
    family: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        family.append(current)
        todo.extend(_children(current))
    for member in family:
        with suppress(ProcessLookupError):
            os.kill(member, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(_alive(member) for member in family) and time.monotonic() < deadline:
        time.sleep(0.02)


# -- PostgreSQL ----------------------------------------------------------------------


def postgres_bindir() -> Path | None:
    """Where initdb and pg_ctl are: INTAKE_TEST_PG_BINDIR, the PATH, or Debian's layout
    (the newest version installed)."""
    configured = os.environ.get("INTAKE_TEST_PG_BINDIR")
    if configured:
        return Path(configured)
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def _as_owner() -> list[str]:
    """The prefix that runs a command as OWNER when we are root (nothing otherwise)."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(OWNER)
    except KeyError:
        unavailable(f"running PostgreSQL as root needs an OS user {OWNER!r}")
    if shutil.which("runuser"):
        return ["runuser", "-u", OWNER, "--"]
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={OWNER}", f"--regid={OWNER}", "--init-groups", "--"]
    unavailable("running PostgreSQL as root needs runuser or setpriv to drop to 'postgres'")
    raise AssertionError("unreachable")  # unavailable() does not return


class PostgresInstance:
    """One private cluster: `init()` once, then any sequence of start/stop/kill."""

    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir = bindir
        self.root = root
        self.data = root / "data"
        self.sockets = root / "sockets"
        self.log = root / "postgres.log"
        self.port = free_port()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, argv: Sequence[str], timeout: float) -> None:
        done = subprocess.run(
            [*_as_owner(), *argv],
            cwd=self.root, capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(
                f"{Path(argv[0]).name} failed ({done.returncode}): {done.stderr or done.stdout}"
                f"\n--- postgres log ---\n{_tail(self.log)}"
            )

    def init(self) -> None:
        self.sockets.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.sockets, user=OWNER, group=OWNER)
        # --no-sync only skips initdb's own final flush; the server runs with fsync on.
        self._run(
            [str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
             "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"],
            timeout=START_TIMEOUT,
        )  # fmt: skip

    def start(self) -> None:
        """Starts on the same port and data directory, and returns once it accepts
        connections (after any crash recovery)."""
        options = " ".join(
            [
                f"-c port={self.port}",
                "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={self.sockets}",
                "-c fsync=on",
                "-c synchronous_commit=on",
                "-c max_connections=200",
            ]
        )
        self._run(
            [str(self.bindir / "pg_ctl"), "start", "-D", str(self.data), "-l", str(self.log),
             "-w", "-t", str(int(START_TIMEOUT)), "-o", options],
            timeout=START_TIMEOUT + 10,
        )  # fmt: skip
        self._wait_accepting()

    def _wait_accepting(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with psycopg.connect(self.url(), connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not come up:\n{_tail(self.log)}") from None
                time.sleep(0.1)

    def stop(self, mode: str = "fast") -> None:
        """`fast` rolls back open transactions and disconnects every client; `immediate`
        quits without a shutdown checkpoint (recovery runs on the next start)."""
        self._run(
            [str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data), "-m", mode,
             "-w", "-t", str(int(STOP_TIMEOUT))],
            timeout=STOP_TIMEOUT + 10,
        )  # fmt: skip

    def postmaster_pid(self) -> int | None:
        try:
            first = (self.data / "postmaster.pid").read_text().splitlines()[0]
        except (FileNotFoundError, IndexError):
            return None
        pid = int(first)
        return pid if _alive(pid) else None

    @property
    def running(self) -> bool:
        return self.postmaster_pid() is not None

    def kill(self) -> None:
        """SIGKILL to the postmaster and all its backends: a crash, not a shutdown."""
        pid = self.postmaster_pid()
        if pid is not None:
            _kill_tree(pid)

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=5) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def log_tail(self) -> str:
        return _tail(self.log)

    def destroy(self) -> None:
        if self.running:
            with suppress(RuntimeError, subprocess.TimeoutExpired):
                self.stop("immediate")
        self.kill()  # whatever did not stop


@contextmanager
def private_postgres() -> Iterator[PostgresInstance]:
    bindir = postgres_bindir()
    if bindir is None or not (bindir / "initdb").exists():
        unavailable("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
        raise AssertionError("unreachable")
    prefix = _as_owner()
    root = Path(tempfile.mkdtemp(prefix="intake-pg-"))
    instance: PostgresInstance | None = None
    try:
        if prefix:
            shutil.chown(root, user=OWNER, group=OWNER)
        instance = PostgresInstance(bindir, root)
        instance.init()
        instance.start()
        yield instance
    finally:
        if instance is not None:
            instance.destroy()
        shutil.rmtree(root, ignore_errors=True)


# -- Redis ---------------------------------------------------------------------------


def _dying_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv` run so that the kernel sends it SIGTERM when the thread that started it
    ends (servers are started from the main thread): a test process killed over its
    time limit then leaves no server behind. util-linux's setpriv sets that up before
    it runs the command; without setpriv the command runs as it is."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *argv] if setpriv else list(argv)


class RedisInstance:
    """One private redis-server without persistence: a kill loses its windows, as a
    real crash of a cache would."""

    def __init__(self, binary: str, root: Path) -> None:
        self.binary = binary
        self.root = root
        self.log = root / "redis.log"
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def start(self) -> None:
        if self.running:
            raise RuntimeError("redis-server is already running")
        self._process = subprocess.Popen(
            _dying_with_parent(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                 "--save", "", "--appendonly", "no", "--dir", str(self.root),
                 "--logfile", str(self.log), "--daemonize", "no"]
            ),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"redis-server exited:\n{_tail(self.log)}")
            try:
                with self.client() as client:
                    if client.ping():
                        return
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not come up:\n{_tail(self.log)}")
            time.sleep(0.05)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> None:
        """A clean shutdown (SIGTERM); nothing is saved."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def kill(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def log_tail(self) -> str:
        return _tail(self.log)


PORT_TRIES = 3  # a free port may be taken by another process before redis-server binds it


@contextmanager
def private_redis() -> Iterator[RedisInstance]:
    binary = os.environ.get("INTAKE_TEST_REDIS_SERVER") or shutil.which("redis-server")
    if binary is None:
        unavailable(
            "redis-server is not installed (nor named by INTAKE_TEST_REDIS_SERVER);"
            " INTAKE_TEST_REDIS_URL can name a Redis server to use instead"
        )
        raise AssertionError("unreachable")
    root = Path(tempfile.mkdtemp(prefix="intake-redis-"))
    instance = RedisInstance(binary, root)
    try:
        for attempt in range(PORT_TRIES):
            try:
                instance.start()
                break
            except RuntimeError:
                if attempt == PORT_TRIES - 1:
                    raise
                instance.kill()
                instance = RedisInstance(binary, root)
        yield instance
    finally:
        instance.kill()
        shutil.rmtree(root, ignore_errors=True)
