"""Fault injection (`make test-faults`): each scenario gets a private PostgreSQL and
Redis of its own, which it may stop, kill and restart; see docs/reliability.md."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.harness import Lab
from tests.support.instances import private_postgres, private_redis


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    with private_postgres() as postgres, private_redis() as redis:
        lab = Lab(postgres, redis, tmp_path)
        try:
            yield lab
        finally:
            lab.close()
