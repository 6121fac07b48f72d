"""The servers under test, each a process of its own on a free port, and the sampling of
their workers' memory while they run."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx
import psutil

STARTUP_DEADLINE = 60.0  # seconds to answer /readyz (migrations run first)
SHUTDOWN_DEADLINE = 15.0
LOG_TAIL = 30
# Compiled event loops and HTTP parsers uvicorn can serve with (see Server.stack).
LOOPS = ("uvloop", "zuvloop")
PARSERS = ("httptools", "zttp")


def stack_name(stack: Mapping[str, str]) -> str:
    return f"{stack['loop']} + {stack['http']}"


class ServerError(RuntimeError):
    """A server that did not start, or died."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def console_script(name: str) -> str:
    """A console script installed beside this interpreter (the venv's `intake`)."""
    beside = Path(sys.executable).parent / name
    if not beside.exists():
        raise ServerError(f"{name} is not installed beside {sys.executable}: run make install")
    return str(beside)


class Server:
    """A server process with its output in a file (a pipe nobody reads could stall it),
    in a session of its own, so that it and any worker it starts stop together."""

    def __init__(
        self, name: str, argv: Sequence[str], env: Mapping[str, str], port: int, log: Path
    ) -> None:
        self.name = name
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.log = log
        with log.open("w") as sink:
            self.process = subprocess.Popen(
                list(argv),
                env=dict(env),
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    def tail(self) -> str:
        try:
            lines = self.log.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return "(no output)"
        return "\n".join(lines[-LOG_TAIL:])

    def wait_ready(self, path: str = "/readyz") -> None:
        deadline = time.monotonic() + STARTUP_DEADLINE
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(
                    f"{self.name} exited with {self.process.returncode}:\n{self.tail()}"
                )
            try:
                if httpx.get(self.base + path, timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            time.sleep(0.1)
        raise ServerError(f"{self.name}: no answer on {path} in {STARTUP_DEADLINE} s")

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise ServerError(f"{self.name} died with {self.process.returncode}:\n{self.tail()}")

    def worker_pids(self) -> list[int]:
        """The processes that serve requests: uvicorn serves in its own process with one
        worker, and in child processes with more."""
        try:
            children = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        return [child.pid for child in children] or [self.process.pid]

    def cpu_seconds(self) -> float:
        """CPU time its workers have used so far: divided by the requests they served, a
        cost per request that other load on the machine does not inflate."""
        total = 0.0
        for pid in self.worker_pids():
            try:
                times = psutil.Process(pid).cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += times.user + times.system
        return total

    def stack(self) -> dict[str, str]:
        """The event loop and HTTP parser its workers run on, told by the native libraries
        they loaded: uvicorn imports uvloop or httptools only to use them, and h11 and
        asyncio, pure Python, are what it uses without them. With several workers, a
        helper process of multiprocessing's loads neither: what any of them loaded."""
        loaded: set[str] = set()
        for pid in self.worker_pids():
            try:
                maps = psutil.Process(pid).memory_maps(grouped=True)
            except psutil.NoSuchProcess:
                continue
            except psutil.Error as error:
                raise ServerError(f"{self.name}: cannot read what it loaded: {error}") from error
            loaded.update(mapped.path for mapped in maps)

        def named(options: tuple[str, ...], otherwise: str) -> str:
            return next(
                (name for name in options if any(f"/{name}/" in path for path in loaded)),
                otherwise,
            )

        return {"loop": named(LOOPS, "asyncio"), "http": named(PARSERS, "h11")}

    def stop(self) -> None:
        """SIGTERM, then the whole session is killed if it does not end in time."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=SHUTDOWN_DEADLINE)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        # Nothing of the session may outlive the bench, a worker least of all.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


class MemorySampler:
    """Samples the resident memory of a server's workers in a thread, and keeps each
    worker's peak."""

    def __init__(self, server: Server, every: float = 0.2) -> None:
        self._server = server
        self._every = every
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._peaks: dict[int, int] = {}
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self._every)

    def sample(self) -> None:
        for pid in self._server.worker_pids():
            try:
                rss = psutil.Process(pid).memory_info().rss
            except psutil.NoSuchProcess:
                continue
            with self._lock:
                self._peaks[pid] = max(self._peaks.get(pid, 0), rss)

    @property
    def peak_mb(self) -> float:
        """The largest peak of any one worker, in megabytes (10^6 bytes)."""
        with self._lock:
            return max(self._peaks.values(), default=0) / 1e6
