"""A template worker: a process of its own that renders owners' templates for its parent
(pool.py), one request at a time, so that no template, however it is written, can take
its parent's time or memory.

It reads one JSON request a line on stdin (`source`, `context`, `autoescape`) and writes
one JSON reply a line on stdout: `{"text": ...}`, or `{"error": ...}` for a template that
fails. Its address space is capped at WORKER_MEMORY_BYTES, so a value too big to hold
fails as MemoryError rather than swapping the host; before each render its CPU limit is
set RENDER_CPU_SECONDS past what it has used, so a render that outruns the sandbox's own
clock is killed by the kernel (SIGXCPU), mid-operation if need be. It ends when its
stdin closes: when its parent ends, it does too.
"""

from __future__ import annotations

import json
import math
import resource
import sys

# Far more than rendering needs (the interpreter and Jinja2 take about 30 MB of address
# space), far less than a host has.
WORKER_MEMORY_BYTES = 256 * 1024 * 1024
RENDER_CPU_SECONDS = 2


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a killed worker leaves no core file


def _limit_cpu_for_one_render() -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = math.ceil(usage.ru_utime + usage.ru_stime)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = used + RENDER_CPU_SECONDS
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _reply(line: bytes) -> dict[str, str]:
    from intake.adapters.templates.sandbox import render  # noqa: PLC0415 - after the limits
    from intake.domain.mail_templates import MailTemplateError  # noqa: PLC0415

    try:
        request = json.loads(line)
        text = render(
            str(request["source"]), dict(request["context"]), autoescape=bool(request["autoescape"])
        )
    except MailTemplateError as error:
        return {"error": str(error)}
    except MemoryError:
        return {"error": "needs too much memory"}
    return {"text": text}


def main() -> None:
    _limit_memory()
    for line in sys.stdin.buffer:
        _limit_cpu_for_one_render()
        reply = _reply(line)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
