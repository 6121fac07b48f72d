"""ProcessTemplateRenderer: the TemplateRenderer port rendered in a few worker processes
(worker.py), each bounded in CPU time and memory by the kernel, and here in time by the
clock: a worker that has not answered within RENDER_TIMEOUT_SECONDS, or that died, is
killed and replaced, and the template is refused. A caller waits at most that long, and
only the caller: the service renders on a thread, never on its event loop.

Workers start when first needed, so a process whose forms have no templates starts
none; they end with the process that started them (their stdin closes). One pool serves
a whole process (shared_renderer).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence

from intake.domain.mail_templates import MAX_OUTPUT_CHARS, MailTemplateError

WORKERS = 2
# Generous on a busy host: the worker's own limits end a render in about 2 s of CPU.
RENDER_TIMEOUT_SECONDS = 10.0
# A reply's longest JSON: every character of the longest mail escaped (\\uXXXX, twice
# for characters past the first plane).
MAX_REPLY_BYTES = MAX_OUTPUT_CHARS * 12 + 1024
TOO_COSTLY = "takes too much time or memory to render"
# -I: no environment variables (INTAKE_* secrets among them), no user site.
WORKER_COMMAND = (sys.executable, "-I", "-m", "intake.adapters.templates.worker")


class _WorkerLostError(Exception):
    """The worker did not answer in time, or died (killed by its own limits)."""


class _Worker:
    def __init__(self, command: Sequence[str]) -> None:
        self._process = subprocess.Popen(  # noqa: S603 - our interpreter, or a test's
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={},
        )

    def ask(self, request: bytes, timeout: float) -> dict[str, object]:
        process = self._process
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(request)
            process.stdin.flush()
        except OSError:
            raise _WorkerLostError from None
        deadline = time.monotonic() + timeout
        reply = bytearray()
        stdout = process.stdout.fileno()
        while not reply.endswith(b"\n"):
            left = deadline - time.monotonic()
            readable, _, _ = select.select([stdout], [], [], max(left, 0))
            if not readable:
                raise _WorkerLostError
            chunk = os.read(stdout, 65536)
            if not chunk or len(reply) + len(chunk) > MAX_REPLY_BYTES:
                raise _WorkerLostError
            reply += chunk
        answer: dict[str, object] = json.loads(reply)
        return answer

    def end(self) -> None:
        self._process.kill()
        self._process.wait()
        for pipe in (self._process.stdin, self._process.stdout):
            if pipe is not None:
                pipe.close()


class ProcessTemplateRenderer:
    """Renders in at most `workers` processes at once; a caller beyond them waits for
    one. Thread-safe: the service calls it from worker threads. `command` starts a
    worker (worker.py's protocol)."""

    def __init__(
        self,
        workers: int = WORKERS,
        timeout: float = RENDER_TIMEOUT_SECONDS,
        command: Sequence[str] = WORKER_COMMAND,
    ) -> None:
        self._command = tuple(command)
        self._slots = threading.BoundedSemaphore(workers)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._timeout = timeout

    def render(self, source: str, context: Mapping[str, object], *, autoescape: bool) -> str:
        request = {"source": source, "context": dict(context), "autoescape": autoescape}
        line = json.dumps(request).encode("utf-8") + b"\n"
        with self._slots:
            worker = self._take()
            try:
                reply = worker.ask(line, self._timeout)
            except (_WorkerLostError, ValueError):
                worker.end()
                raise MailTemplateError(TOO_COSTLY) from None
            with self._lock:
                self._idle.append(worker)
        if "error" in reply:
            raise MailTemplateError(str(reply["error"]))
        return str(reply.get("text", ""))

    def _take(self) -> _Worker:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return _Worker(self._command)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.end()


_shared: tuple[int, ProcessTemplateRenderer] | None = None
_shared_lock = threading.Lock()


def shared_renderer() -> ProcessTemplateRenderer:
    """The pool of this process, made on first use (a forked child makes its own: the
    workers' pipes are its parent's)."""
    global _shared  # noqa: PLW0603 - one pool per process, as there is one process
    with _shared_lock:
        if _shared is None or _shared[0] != os.getpid():
            renderer = ProcessTemplateRenderer()
            atexit.register(renderer.close)
            _shared = (os.getpid(), renderer)
        return _shared[1]
