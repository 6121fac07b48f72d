"""Each fuzz target under atheris for a bounded time, in `make test`: a crash, a broken
invariant or a hang fails the test, and the message names the reproducer and the command
that replays it. `make fuzz` runs the same targets for longer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.run import report, run_target
from tests.fuzz.targets import TARGETS

pytestmark = pytest.mark.slow

# Per target: the five together, with their processes' start-up, take about 20 s; the
# corpus of every target is replayed besides (test_corpus.py), and `make fuzz` runs long.
SECONDS = 2
# Far fewer inputs than any target runs in that time: a harness that stopped at once
# (a broken import, a bad flag) fails instead of passing having tested nothing.
MIN_RUNS = 200


@pytest.mark.parametrize("target", list(TARGETS))
def test_a_bounded_fuzzing_run_finds_nothing(target: str, tmp_path: Path) -> None:
    result = run_target(target, SECONDS, tmp_path)

    assert result.ok, report(result)
    assert result.runs >= MIN_RUNS, f"{target} ran {result.runs} inputs\n{result.log.read_text()}"
