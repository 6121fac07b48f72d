"""Spam retention on the in-memory blob store and store: old spam and unverified
submissions are erased in batches with their files; the rest, and the files of a store
that fails, are left (docs/operations.md, "Purging and stored files")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from attrs import evolve

from intake.adapters.blobs import InMemoryBlobStore
from intake.adapters.memory import FakeClock, InMemoryStore
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.uploads import StoredFile, file_key
from intake.ports.blobs import BlobStoreUnavailable
from intake.service.retention import ErasedCounts, erase_flagged
from tests.contract.builders import T0, WORKSPACE_ID, plan, seed, submission

pytestmark = pytest.mark.anyio

DAY = timedelta(days=1)
NOW = T0 + 60 * DAY
MONTH = 30 * DAY


class World:
    def __init__(self) -> None:
        self.clock = FakeClock(T0)
        self.blobs = InMemoryBlobStore(clock=self.clock)
        self.store = InMemoryStore()

    async def committed(
        self, n: int, status: SubmissionStatus, age: timedelta, files: int = 1
    ) -> Submission:
        """A submission `age` old at NOW, its event published, with `files` blobs."""
        sub = submission(n, status=status, created_at=NOW - age)
        stored = tuple(
            StoredFile("cv", f"{i}.txt", 7, "text/plain", "0" * 64, file_key(sub.submission_id, i))
            for i in range(files)
        )
        sub = evolve(sub, files=stored)
        await self.store.submissions.commit(plan(sub))
        for each in stored:
            async with await self.blobs.writer(
                each.key, content_type="text/plain", max_size=7
            ) as writer:
                await writer.write(b"content")
                await writer.commit()
        await self.store.deliveries.fan_out(NOW, 100)
        return sub

    async def keys(self) -> set[str]:
        return {info.key async for info in self.blobs.list()}


@pytest.fixture
async def world() -> World:
    made = World()
    await seed(made.store)
    return made


async def test_old_flagged_submissions_and_their_files_are_erased(world: World) -> None:
    spam = await world.committed(1, SubmissionStatus.SPAM, MONTH + DAY, files=2)
    unverified = await world.committed(2, SubmissionStatus.UNVERIFIED, MONTH)
    young = await world.committed(3, SubmissionStatus.SPAM, MONTH - DAY)
    accepted = await world.committed(4, SubmissionStatus.ACCEPTED, 10 * MONTH)

    counts = await erase_flagged(world.store.submissions, world.blobs, NOW, MONTH)

    assert counts == ErasedCounts(submissions=2, files=3)
    assert await world.store.submissions.get(spam.submission_id) is None
    assert await world.store.submissions.get(unverified.submission_id) is None
    assert await world.keys() == {f.key for f in (*young.files, *accepted.files)}
    assert await world.store.workspaces.storage_used(WORKSPACE_ID) == 14


async def test_every_batch_is_erased(world: World) -> None:
    for n in range(1, 8):
        await world.committed(n, SubmissionStatus.SPAM, 2 * MONTH)

    counts = await erase_flagged(world.store.submissions, world.blobs, NOW, MONTH, batch_size=3)

    assert counts == ErasedCounts(submissions=7, files=7)
    assert await world.keys() == set()


async def test_no_retention_keeps_them_forever(world: World) -> None:
    spam = await world.committed(1, SubmissionStatus.SPAM, 100 * MONTH)

    counts = await erase_flagged(world.store.submissions, world.blobs, NOW, timedelta(0))

    assert counts == ErasedCounts(submissions=0, files=0)
    assert await world.store.submissions.get(spam.submission_id) == spam
    assert await world.keys() == {spam.files[0].key}


async def test_without_a_blob_store_the_rows_go_and_the_files_are_counted_left(
    world: World,
) -> None:
    spam = await world.committed(1, SubmissionStatus.SPAM, 2 * MONTH, files=2)

    counts = await erase_flagged(world.store.submissions, None, NOW, MONTH)

    assert counts == ErasedCounts(submissions=1, files=0)
    assert await world.store.submissions.get(spam.submission_id) is None


async def test_a_file_the_store_cannot_delete_is_left_to_the_sweep(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    await world.committed(1, SubmissionStatus.SPAM, 2 * MONTH, files=2)

    async def down(key: str) -> None:
        raise BlobStoreUnavailable("down")

    monkeypatch.setattr(world.blobs, "delete", down)
    counts = await erase_flagged(world.store.submissions, world.blobs, NOW, MONTH)

    # The rows are gone: the files no row links are the sweep's.
    assert counts == ErasedCounts(submissions=1, files=0)
    assert len(await world.keys()) == 2


async def test_a_negative_retention_is_refused(world: World) -> None:
    with pytest.raises(ValueError, match="retention"):
        await erase_flagged(world.store.submissions, world.blobs, NOW, -DAY)
