"""What a test runs beside itself: the `intake` command, run once (`run_cli`, in this
process; `run_installed_cli`, the installed command as a process of its own) or left
running (`IntakeProcess`, and `ServedProcess` for `intake serve`), and the start/stop
lifecycle they share with the in-process test servers (`Background`).

A long-running command writes to a log file, not a pipe (a pipe nobody reads could fill
and stall it), and runs in a session of its own, so that one that hangs is killed
together with its workers.

    env = clean_env(INTAKE_DATABASE_URL=f"sqlite:///{tmp_path / 'intake.db'}")
    workspace = run_cli(env, "workspace", "create", "--name", "Demo")
    with ServedProcess(env, tmp_path / "serve.log") as server:
        httpx.get(f"{server.base}/healthz")
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout, suppress
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx
import pytest

from intake.entrypoints.cli import main

STARTUP_TIMEOUT = 60.0  # seconds for a server to answer its readiness path, on a busy machine
STOP_TIMEOUT = 10.0  # seconds for a signalled process to exit before it is killed
CLI_TIMEOUT = 60.0  # seconds for one `intake ... --json` command
PROBE_TIMEOUT = 2.0  # seconds for one readiness request
POLL_INTERVAL = 0.1
# What a started process must not inherit from the developer's shell: intake's own
# settings, and the metrics directory that `intake serve` manages for its workers.
NOT_INHERITED_PREFIX = "INTAKE_"
NOT_INHERITED = frozenset({"PROMETHEUS_MULTIPROC_DIR"})
# The sealing key of the processes a test starts on PostgreSQL, which refuses to start
# without one (INTAKE_SECRET_KEY); made by `intake secrets generate-key`.
TEST_SECRET_KEY = "dGVzdC1zZWFsaW5nLWtleS1vZi10aGUtdGVzdHMtMDE"
# How long a PostgreSQL process a test starts waits for a free or new connection: on a
# busy machine a new one can take longer than the 2 s default, and a test that is not
# about the pool would fail for it (a test that is sets its own).
POSTGRES_POOL_TIMEOUT = "30"


def console_script() -> str:
    """The `intake` command of the running interpreter's environment (else the one on
    PATH), so that the processes run the code under test."""
    beside = Path(sys.executable).parent / "intake"
    found = str(beside) if beside.exists() else shutil.which("intake")
    assert found, f"the intake console script is not installed beside {sys.executable}"
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on at the moment."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def clean_env(**overrides: str) -> dict[str, str]:
    """This process's environment without any INTAKE_* setting of the developer's shell
    (nor PROMETHEUS_MULTIPROC_DIR), plus `overrides`; on PostgreSQL, a sealing key and
    a patient pool unless they say otherwise."""
    inherited = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(NOT_INHERITED_PREFIX) and name not in NOT_INHERITED
    }
    if overrides.get("INTAKE_DATABASE_URL", "").startswith("postgres"):
        overrides = {
            "INTAKE_SECRET_KEY": TEST_SECRET_KEY,
            "INTAKE_DATABASE_POOL_TIMEOUT": POSTGRES_POOL_TIMEOUT,
            **overrides,
        }
    return {**inherited, **overrides}


def run_cli(env: Mapping[str, str], *argv: str) -> dict[str, Any]:
    """Runs `intake <argv> --json` as the installed command would, with `env` as its whole
    environment, asserts that it succeeded, and returns what it printed. It runs intake's
    `main` in this process: a command as a process costs a second of CPU on a busy
    machine, dozens of times in some tests, and what a test of a command's own process
    needs (its exit, its signals, its output streams) `run_installed_cli` gives. Only
    from the test's own thread: the environment and the output streams are this
    process's."""
    assert threading.current_thread() is threading.main_thread(), "use run_installed_cli"
    out, err = io.StringIO(), io.StringIO()
    codes: list[int] = []
    with _environment(env), redirect_stdout(out), redirect_stderr(err):
        if _in_event_loop():  # an async test's: the command runs its own, in a thread
            thread = threading.Thread(target=lambda: codes.append(main([*argv, "--json"])))
            thread.start()
            thread.join()
        else:
            codes.append(main([*argv, "--json"]))
    assert codes == [0], f"intake {' '.join(argv)}: {err.getvalue()}{out.getvalue()}"
    document = json.loads(out.getvalue())
    assert isinstance(document, dict)
    return document


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    """This process's environment made `env` for the length of the block, then put back."""
    saved = dict(os.environ)
    _replace_environment(env)
    try:
        yield
    finally:
        _replace_environment(saved)


def _replace_environment(env: Mapping[str, str]) -> None:
    for name in set(os.environ) - set(env):
        del os.environ[name]
    for name, value in env.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def run_installed_cli(
    env: Mapping[str, str], *argv: str, timeout: float = CLI_TIMEOUT
) -> dict[str, Any]:
    """Runs the installed `intake <argv> --json` as a process, asserts that it succeeded,
    and returns what it printed."""
    done = subprocess.run(
        [console_script(), *argv, "--json"],
        env=dict(env), capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"intake {' '.join(argv)}: {done.stderr}"
    document = json.loads(done.stdout)
    assert isinstance(document, dict)
    return document


def wait_for(
    condition: Callable[[], bool],
    timeout: float,
    what: str,
    diagnostics: Callable[[], str] = lambda: "",
) -> None:
    """Polls until `condition` holds; fails the test with `what` and the diagnostics."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}\n{diagnostics()}")
        time.sleep(POLL_INTERVAL)


def tail(path: Path, lines: int | None) -> str:
    """The last `lines` lines of a log file (all of it when `lines` is None)."""
    try:
        text = path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return "(no log)"
    return "\n".join(text if lines is None else text[-lines:])


class Background(ABC):
    """Something a test runs beside itself between `start()` and `stop()`; as a context
    manager, for the length of a `with` block."""

    @abstractmethod
    def start(self) -> Self: ...

    @abstractmethod
    def stop(self) -> object: ...

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class IntakeProcess(Background):
    """A long-running `intake <argv>` command with its output in `log`. It may be started
    again once it has exited; a restart appends to the log.

    `stop()` sends `stop_signal` (SIGTERM, as a service manager does; SIGINT as Ctrl-C
    does) and waits up to `stop_timeout`. Failure messages quote the log's last
    `log_tail` lines, or all of it when None."""

    def __init__(
        self,
        env: Mapping[str, str],
        log: Path,
        argv: Sequence[str],
        *,
        stop_signal: signal.Signals = signal.SIGTERM,
        stop_timeout: float = STOP_TIMEOUT,
        log_tail: int | None = None,
    ) -> None:
        self.env = dict(env)
        self.log = log
        self.argv = list(argv)
        self.stop_signal = stop_signal
        self.stop_timeout = stop_timeout
        self.log_tail = log_tail
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def __str__(self) -> str:
        return f"intake {' '.join(self.argv)}"

    def start(self) -> Self:
        assert not self.running, f"{self} is already running"
        with self.log.open("a" if self.starts else "w") as sink:
            self.process = subprocess.Popen(
                [console_script(), *self.argv],
                env=self.env, stdout=sink, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        self.starts += 1
        return self

    @property
    def pid(self) -> int:
        assert self.process is not None, f"{self} was never started"
        return self.process.pid

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def returncode(self) -> int | None:
        """The exit status once it has exited (negative: the signal that ended it)."""
        return None if self.process is None else self.process.poll()

    def stop(self) -> int | None:
        """`stop_signal`, then a bounded wait; a process that hangs is killed with its
        whole process group. Returns the exit status (None if it was never started)."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(self.stop_signal)
            try:
                process.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return process.returncode

    def kill(self) -> None:
        """SIGKILL to the process and its whole group (its workers) at once: no shutdown
        of any kind."""
        process = self.process
        assert process is not None, f"{self} was never started"
        with suppress(ProcessLookupError):  # the group is gone already
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def log_text(self) -> str:
        """Everything the process has written so far."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def tail(self) -> str:
        return tail(self.log, self.log_tail)

    def describe(self) -> str:
        """For failure messages: what it is and what it said."""
        return f"--- {self} ---\n{self.tail()}"

    def answers(self, url: str) -> bool:
        """Whether `url` answers 200 now; fails the test if the process has exited."""
        if self.process is not None and self.process.poll() is not None:
            pytest.fail(f"{self} exited with {self.process.returncode}:\n{self.tail()}")
        try:
            return httpx.get(url, timeout=PROBE_TIMEOUT).status_code == 200
        except httpx.TransportError:
            return False  # not listening yet

    def wait_until_answering(self, url: str, timeout: float = STARTUP_TIMEOUT) -> None:
        _wait_until_answering([(self, url)], timeout)


class ServedProcess(IntakeProcess):
    """`intake serve` on a free 127.0.0.1 port, at `base`. The port is chosen once: a
    restart listens on the same one, so clients keep their URL.

    `start()` waits until `ready_path` answers (within `startup_timeout`); as a context
    manager it serves for the length of the block. `workers` None leaves `--workers` to
    its default."""

    def __init__(
        self,
        env: Mapping[str, str],
        log: Path,
        *,
        workers: int | None = None,
        ready_path: str = "/healthz",
        startup_timeout: float = STARTUP_TIMEOUT,
        stop_signal: signal.Signals = signal.SIGTERM,
        stop_timeout: float = STOP_TIMEOUT,
        log_tail: int | None = None,
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        self.ready_path = ready_path
        self.startup_timeout = startup_timeout
        argv = ["serve", "--port", str(self.port)]
        if workers is not None:
            argv += ["--workers", str(workers)]
        super().__init__(
            env, log, argv, stop_signal=stop_signal, stop_timeout=stop_timeout, log_tail=log_tail
        )

    def __str__(self) -> str:
        workers = "" if self.workers is None else f" (workers={self.workers})"
        return f"intake serve on {self.base}{workers}"

    def start(self, *, wait: bool = True) -> Self:
        """Starts the server and, unless told not to, waits until it is ready; a server
        that does not get ready is stopped before the test fails."""
        super().start()
        if wait:
            try:
                self.wait_until_healthy()
            except BaseException:
                self.stop()
                raise
        return self

    def wait_until_healthy(self) -> None:
        wait_until_ready([self])


def wait_until_ready(servers: Sequence[ServedProcess]) -> None:
    """Waits for every server to answer its `ready_path`, all of them at once, within the
    longest of their `startup_timeout`s."""
    timeout = max(server.startup_timeout for server in servers)
    _wait_until_answering([(s, f"{s.base}{s.ready_path}") for s in servers], timeout)


def _wait_until_answering(targets: Sequence[tuple[IntakeProcess, str]], timeout: float) -> None:
    waiting = list(targets)

    def all_answer() -> bool:
        waiting[:] = [(process, url) for process, url in waiting if not process.answers(url)]
        return not waiting

    what = " and ".join(f"{process} to answer {url}" for process, url in targets)
    wait_for(all_answer, timeout, what, lambda: "\n".join(p.describe() for p, _ in waiting))
