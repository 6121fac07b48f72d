"""SQLite's write-ahead log after an erasure: cut to nothing, so no earlier copy of an
erased value stays in `-wal`; and when another connection still reads an older snapshot,
the erasure stands all the same (logged, never refused), and the next one cuts it."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from attrs import evolve

from intake.adapters.sqlite import open_sqlite_store
from intake.domain.model import Submission
from intake.domain.triage import deletion_event
from intake.ports.store import Store
from intake.ports.triage import Erasure
from tests.contract.builders import T0, plan, seed, submission

pytestmark = pytest.mark.anyio

FIRST, SECOND = "a-value-erased-first-51c0", "a-value-erased-second-9e7d"


def _wal(path: Path) -> bytes:
    log = path.with_name(path.name + "-wal")
    return log.read_bytes() if log.exists() else b""


async def _commit(store: Store, n: int, value: str) -> Submission:
    made = evolve(submission(n), data={"message": value})
    await store.submissions.commit(plan(made))
    return made


async def _erase(store: Store, made: Submission) -> None:
    event = deletion_event(f"evt_deleted_{made.submission_id}", made, T0)
    assert await store.submissions.erase(Erasure(made.submission_id, event)) is not None


async def test_a_reader_holding_an_old_snapshot_delays_the_cut_not_the_erasure(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "intake.db"
    store = await open_sqlite_store(f"sqlite:///{path}", busy_timeout=0.05)
    try:
        await seed(store)
        first, second = await _commit(store, 1, FIRST), await _commit(store, 2, SECOND)
        with closing(sqlite3.connect(path, isolation_level=None)) as reader:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM submissions").fetchone()  # a snapshot held

            with caplog.at_level(logging.WARNING, logger="intake.sqlite"):
                await _erase(store, first)

            assert "could not be truncated after an erasure" in caplog.text
            assert await store.submissions.get(first.submission_id) is None
            assert FIRST.encode() in _wal(path)  # the reader's snapshot still needs it
            reader.execute("COMMIT")

            await _erase(store, second)  # the reader is still connected, reading nothing

        assert _wal(path) == b""
        assert FIRST.encode() not in path.read_bytes()
        assert SECOND.encode() not in path.read_bytes()
    finally:
        await store.close()
