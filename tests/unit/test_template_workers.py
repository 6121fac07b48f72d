"""The worker processes bound a render whatever the sandbox lets through: with the
sandbox's own limits lifted (as a regression would), a runaway power is killed by the
worker's CPU limit and a huge value fails under its memory limit, each a template error
within seconds rather than a hung process; a worker that stops answering is killed at the
time limit; and the pool goes on rendering afterwards."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from intake.adapters.templates.pool import TOO_COSTLY, ProcessTemplateRenderer
from intake.domain.mail_templates import MailTemplateError

# A worker whose sandbox bounds nothing: every limit of budget.py lifted before the
# sandbox is imported. Its CPU limit is the least the kernel takes (whole seconds): the
# runaway it ends burns that much CPU before it is killed.
UNBOUNDED_WORKER = (
    sys.executable,
    "-c",
    "import intake.adapters.templates.budget as budget\n"
    "budget.MAX_INT_BITS = budget.MAX_VALUE_CHARS = budget.MAX_MADE = 10**12\n"
    "budget.MAX_OPERATIONS = 10**12\n"
    "import intake.adapters.templates.worker as worker\n"
    "worker.RENDER_CPU_SECONDS = 1\n"
    "worker.main()\n",
)


@pytest.fixture
def unbounded() -> Iterator[ProcessTemplateRenderer]:
    renderer = ProcessTemplateRenderer(workers=1, command=UNBOUNDED_WORKER)
    yield renderer
    renderer.close()


def test_a_runaway_power_is_killed_by_the_cpu_limit(unbounded: ProcessTemplateRenderer) -> None:
    with pytest.raises(MailTemplateError, match=TOO_COSTLY):
        unbounded.render("{{ 9 ** 99999999 }}", {}, autoescape=False)

    assert unbounded.render("{{ 2 ** 10 }}", {}, autoescape=False) == "1024"


def test_a_huge_value_fails_under_the_memory_limit(unbounded: ProcessTemplateRenderer) -> None:
    with pytest.raises(MailTemplateError, match="memory"):
        unbounded.render('{{ ("x" * 1000000000)|length }}', {}, autoescape=False)

    assert unbounded.render("{{ 'ok' }}", {}, autoescape=False) == "ok"


def test_a_worker_that_does_not_answer_is_killed_at_the_time_limit() -> None:
    silent = (sys.executable, "-c", "import time; time.sleep(600)")
    renderer = ProcessTemplateRenderer(workers=1, timeout=1.0, command=silent)
    try:
        with pytest.raises(MailTemplateError, match=TOO_COSTLY):
            renderer.render("hello", {}, autoescape=False)
    finally:
        renderer.close()


def test_the_sandboxed_worker_refuses_what_the_unbounded_one_is_killed_for() -> None:
    renderer = ProcessTemplateRenderer(workers=1)
    try:
        with pytest.raises(MailTemplateError, match="bits"):
            renderer.render("{{ 9 ** 99999999 }}", {}, autoescape=False)
    finally:
        renderer.close()
