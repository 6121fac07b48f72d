"""The upload sweep on the in-memory blob store and store: what it deletes and keeps."""

from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta

import pytest
from attrs import evolve

from intake.adapters.blobs import InMemoryBlobStore
from intake.adapters.memory import FakeClock, InMemoryStore
from intake.domain import ids
from intake.domain.uploads import StoredFile, file_key
from intake.ports.blobs import BlobStoreUnavailable
from intake.ports.submissions import SubmissionRepository
from intake.service.sweep import BATCH_SIZE, SweepCounts, sweep_uploads
from tests.contract.builders import T0, plan, seed, submission

pytestmark = pytest.mark.anyio

HOUR = timedelta(hours=1)


def _unstored_id(n: int) -> str:
    """A well-formed submission id no store holds."""
    return ids.submission_id(
        int(T0.timestamp() * 1000), n.to_bytes(ids.SUBMISSION_RANDOM_BYTES, "big")
    )


class World:
    def __init__(self) -> None:
        self.clock = FakeClock(T0)
        self.blobs = InMemoryBlobStore(clock=self.clock)
        self.store = InMemoryStore()

    async def put(self, key: str, content: bytes = b"content") -> None:
        async with await self.blobs.writer(
            key, content_type="text/plain", max_size=len(content)
        ) as writer:
            await writer.write(content)
            await writer.commit()

    async def stored_with_files(self, n: int, count: int) -> str:
        """A committed submission that links `count` files, and their blobs."""
        sub = submission(n)
        files = tuple(
            StoredFile(
                field="attachment",
                name=f"file-{i}.txt",
                size=7,
                content_type="text/plain",
                sha256="0" * 64,
                key=file_key(sub.submission_id, i),
            )
            for i in range(count)
        )
        sub = evolve(sub, files=files)
        await self.store.submissions.commit(plan(sub))
        for stored in files:
            await self.put(stored.key)
        return sub.submission_id

    async def interrupted_write(self) -> None:
        """A write begun and never finished, as a process that died leaves it."""
        writer = await self.blobs.writer(
            file_key(_unstored_id(999), 0), content_type="text/plain", max_size=100
        )
        await writer.write(b"half of it")

    def keys(self) -> set[str]:
        return set(self.blobs.blobs)

    async def sweep(self, grace: timedelta = HOUR) -> SweepCounts:
        return await sweep_uploads(self.blobs, self.store.submissions, self.clock.now(), grace)


@pytest.fixture
async def world() -> World:
    made = World()
    await seed(made.store)
    return made


async def test_old_orphans_and_interrupted_writes_go_and_linked_files_stay(world: World) -> None:
    linked = await world.stored_with_files(1, 2)
    orphan = _unstored_id(7)
    await world.put(file_key(orphan, 0))
    await world.put(file_key(orphan, 1))
    await world.interrupted_write()
    world.clock.advance(2 * 3600)

    counts = await world.sweep()

    assert counts == SweepCounts(orphans=2, incomplete=1)
    assert world.keys() == {file_key(linked, 0), file_key(linked, 1)}
    assert world.blobs.incoming == {}
    assert await world.sweep() == SweepCounts(orphans=0, incomplete=0)


async def test_anything_younger_than_the_grace_period_is_left(world: World) -> None:
    old_orphan = file_key(_unstored_id(1), 0)
    await world.put(old_orphan)
    world.clock.advance(3600)
    young_orphan = file_key(_unstored_id(2), 0)
    await world.put(young_orphan)  # an upload whose request may still commit
    await world.interrupted_write()  # one still being written
    world.clock.advance(1)

    assert await world.sweep() == SweepCounts(orphans=1, incomplete=0)
    assert world.keys() == {young_orphan}
    assert len(world.blobs.incoming) == 1

    world.clock.advance(3600)
    assert await world.sweep() == SweepCounts(orphans=1, incomplete=1)
    assert world.keys() == set()


async def test_the_grace_period_is_the_callers(world: World) -> None:
    orphan = file_key(_unstored_id(1), 0)
    await world.put(orphan)
    world.clock.advance(90 * 60)

    assert await world.sweep(2 * HOUR) == SweepCounts(orphans=0, incomplete=0)
    assert world.keys() == {orphan}
    assert await world.sweep(HOUR) == SweepCounts(orphans=1, incomplete=0)


async def test_keys_intake_did_not_make_are_left_alone(world: World) -> None:
    foreign = {
        "notes/0",  # a folder name, not a submission id
        "sub_notanid/0",
        f"{_unstored_id(1)}/first",  # not a file's position
        _unstored_id(2),  # no position at all
        f"{_unstored_id(3)}/0/extra",
        "backups/2025/1",
    }
    for key in foreign:
        await world.put(key)
    world.clock.advance(24 * 3600)

    assert await world.sweep() == SweepCounts(orphans=0, incomplete=0)
    assert world.keys() == foreign


class CountingSubmissions:
    """The memory store's repository, with the size of every `existing` call noted."""

    def __init__(self, inner: SubmissionRepository) -> None:
        self.inner = inner
        self.calls: list[int] = []

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        self.calls.append(len(submission_ids))
        return await self.inner.existing(submission_ids)


async def test_ids_are_checked_in_batches_the_store_accepts(world: World) -> None:
    linked = await world.stored_with_files(1, 1)
    orphans = [file_key(_unstored_id(n), 0) for n in range(1, BATCH_SIZE + 2)]
    for key in orphans:
        await world.put(key)
    world.clock.advance(2 * 3600)
    counting = CountingSubmissions(world.store.submissions)

    counts = await sweep_uploads(
        world.blobs,
        counting,
        world.clock.now(),
        HOUR,
    )

    assert counts == SweepCounts(orphans=len(orphans), incomplete=0)
    assert world.keys() == {file_key(linked, 0)}
    assert sum(counting.calls) == len(orphans) + 1
    assert max(counting.calls) <= BATCH_SIZE
    assert len(counting.calls) == 2


async def test_a_store_that_cannot_be_reached_stops_the_sweep(world: World) -> None:
    await world.put(file_key(_unstored_id(1), 0))
    world.clock.advance(2 * 3600)
    world.blobs.unavailable = True

    with pytest.raises(BlobStoreUnavailable):
        await world.sweep()


async def test_a_negative_grace_period_is_refused(world: World) -> None:
    with pytest.raises(ValueError, match="negative"):
        await world.sweep(-HOUR)
