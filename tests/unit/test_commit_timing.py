"""A filled honeypot's commit lasts as long as a real commit drawn from the recent ones,
so a bot cannot tell from the answer's time that it was caught."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from intake.domain.model import FieldValue
from intake.ports.submissions import CommitPlan, CommitResult
from intake.service.commit_timing import WINDOW, CommitTiming, wait_precisely
from intake.service.messages import Accepted, FieldsBody
from tests.property.world import World, public, request

pytestmark = pytest.mark.anyio


class Stopwatch:
    """A timer the test moves by hand, and a sleep that moves it and notes the wait."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _timing(watch: Stopwatch, pick: int = 0) -> CommitTiming:
    def choose(durations: Sequence[float]) -> float:
        return durations[pick]

    return CommitTiming(timer=watch, sleep=watch.sleep, choose=choose)


async def _real(timing: CommitTiming, watch: Stopwatch, seconds: float) -> None:
    started = timing.start()
    watch.now += seconds
    timing.real_committed(started)


async def _decoy(timing: CommitTiming, watch: Stopwatch, seconds: float) -> float:
    started = timing.start()
    watch.now += seconds
    await timing.stretch_decoy(started)
    return watch.now - started


async def test_a_decoy_lasts_as_long_as_the_real_commit_drawn() -> None:
    watch = Stopwatch()
    timing = _timing(watch, pick=1)
    await _real(timing, watch, 0.0008)
    await _real(timing, watch, 0.0011)

    lasted = await _decoy(timing, watch, 0.0005)

    assert lasted == pytest.approx(0.0011)
    assert watch.slept == [pytest.approx(0.0006)]


async def test_a_decoy_slower_than_the_draw_waits_no_more() -> None:
    watch = Stopwatch()
    timing = _timing(watch)
    await _real(timing, watch, 0.0004)

    assert await _decoy(timing, watch, 0.0009) == pytest.approx(0.0009)
    assert watch.slept == []


async def test_before_any_real_commit_a_decoy_does_not_wait() -> None:
    watch = Stopwatch()
    timing = _timing(watch)

    await _decoy(timing, watch, 0.0001)

    assert watch.slept == []


async def test_only_the_recent_real_commits_are_drawn_from() -> None:
    watch = Stopwatch()
    timing = _timing(watch, pick=0)  # the oldest still kept
    await _real(timing, watch, 1.0)
    for _ in range(WINDOW):
        await _real(timing, watch, 0.001)

    assert await _decoy(timing, watch, 0.0) == pytest.approx(0.001)


async def test_the_pipeline_stretches_a_honeypot_s_commit_to_a_real_one_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watch = Stopwatch()
    world = World.build(commit_timing=_timing(watch))
    workspace = await world.workspace()
    form = await world.seed.form(workspace.workspace_id)
    submissions = world.store.submissions
    commit = submissions.commit

    async def slow_commit(plan: CommitPlan) -> CommitResult:
        watch.now += 0.0012  # a real commit writes more rows than a honeypot's
        return await commit(plan)

    monkeypatch.setattr(submissions, "commit", slow_commit)
    fields: dict[str, FieldValue] = {"email": "ada@example.com", "message": "Hello"}

    real = await world.submit(request(public(form), FieldsBody(fields)))
    trapped = await world.submit(request(public(form), FieldsBody({**fields, "_gotcha": "x"})))

    assert isinstance(real, Accepted)
    assert isinstance(trapped, Accepted)
    assert watch.slept == [pytest.approx(0.0012)]


async def test_a_precise_wait_lasts_at_least_its_time() -> None:
    for seconds in (0.0003, 0.003):
        started = time.perf_counter()
        await wait_precisely(seconds)
        assert time.perf_counter() - started >= seconds
