"""Scoring's cost: the domain's scoring call, the one the pipeline's SCORE step makes,
timed alone for each mail of the corpus on the statistics the full run taught, after the
run (one call per mail, `time.perf_counter_ns` around it, nothing else inside)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from bench.spam.corpus import Mail
from intake.domain.scoring import score
from intake.entrypoints.library import Intake

HOW = "domain scoring call alone, per mail, after the full run"


async def scoring_times(intake: Intake, workspace_id: str, mails: Sequence[Mail]) -> list[float]:
    """Microseconds of the scoring call for each mail."""
    del intake, workspace_id  # what this build's scoring reads: the text alone
    times: list[float] = []
    for mail in mails:
        data = mail.data
        started = time.perf_counter_ns()
        score(data, mail.subject)
        times.append((time.perf_counter_ns() - started) / 1000)
    return times
