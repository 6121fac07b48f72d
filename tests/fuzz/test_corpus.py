"""The seed corpus replayed through every target in process, without atheris: each seed
(the crashes the fuzzers found among them) keeps passing its target's invariants."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.run import CORPUS
from tests.fuzz.targets import TARGETS

SEEDS = sorted(path for path in CORPUS.glob("*/*") if path.is_file())


def test_every_target_has_a_small_seed_corpus() -> None:
    for target in TARGETS:
        seeds = list((CORPUS / target).iterdir())
        assert 2 <= len(seeds) <= 20, f"{target}: {len(seeds)} seeds"
        assert all(seed.stat().st_size <= 4096 for seed in seeds)
    assert {path.name for path in CORPUS.iterdir()} == set(TARGETS)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_a_seed_passes_its_target(seed: Path) -> None:
    TARGETS[seed.parent.name](seed.read_bytes())
