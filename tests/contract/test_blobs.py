"""The blob store's contract, held by the in-memory fake, the local directory and S3.

S3 runs against moto's server mode in this process (tests/support/s3_server.py), so it
needs no outside service. Each harness also says what its backing storage physically
holds, so "nothing left behind" is checked on the disk or the bucket, not through the
store's own eyes.
"""

from __future__ import annotations

import hashlib
import os
import random
import socket
import stat
import tracemalloc
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import aclosing, closing
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import anyio
import anyio.lowlevel
import pytest
from attrs import define

from intake.adapters.blobs import InMemoryBlobStore, LocalBlobStore, S3BlobStore, open_blob_store
from intake.adapters.blobs.local_format import HEADER_SIZE
from intake.adapters.blobs.local_writer import WRITE_BATCH, LocalBlobWriter
from intake.adapters.blobs.s3 import PART_SIZE
from intake.adapters.blobs.s3_writer import S3BlobWriter
from intake.adapters.memory import FakeClock
from intake.config import Settings
from intake.domain.errors import StorageUnavailable
from intake.ports.blobs import (
    INCOMING_PREFIX,
    BlobInfo,
    BlobNotFound,
    BlobStore,
    BlobStoreError,
    BlobStoreUnavailable,
    BlobTooLarge,
    BlobWriter,
    InvalidBlobKey,
)
from tests.support.local_server import LocalHttpServer
from tests.support.s3_server import SECRET_KEY, S3Server, fake_credentials_session

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024
S3_PREFIX = "tenant-a/blobs"


@define
class Harness:
    name: str
    store: BlobStore
    clock: FakeClock
    # Everything the backing storage holds: files, objects, unfinished uploads.
    contents: Callable[[], set[str]]
    # Bytes of an unfinished write that already reached the backing storage.
    stored_so_far: Callable[[], int]
    # A file system cannot hold `a` and `a/b` both; S3 can.
    folders_conflict: bool


def _memory_harness(clock: FakeClock) -> Harness:
    store = InMemoryBlobStore(clock=clock)
    return Harness(
        name="memory",
        store=store,
        clock=clock,
        contents=lambda: set(store.blobs) | {f"incoming:{t}" for t in store.incoming},
        stored_so_far=lambda: sum(incoming.size for incoming in store.incoming.values()),
        folders_conflict=True,
    )


def _files(root: Path) -> set[str]:
    return {
        str(Path(folder, name).relative_to(root))
        for folder, _, names in os.walk(root)
        for name in names
    }


def _local_harness(clock: FakeClock, root: Path) -> Harness:
    def stored_so_far() -> int:
        incoming = root / ".incoming"
        return sum(path.stat().st_size - HEADER_SIZE for path in incoming.iterdir())

    return Harness(
        name="local",
        store=LocalBlobStore(root, clock=clock),
        clock=clock,
        contents=lambda: _files(root),
        stored_so_far=stored_so_far,
        folders_conflict=True,
    )


def _s3_harness(clock: FakeClock, server: S3Server, bucket: str) -> Harness:
    client = server.client()

    def contents() -> set[str]:
        objects = client.list_objects_v2(Bucket=bucket).get("Contents", [])
        uploads = client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
        return {entry["Key"] for entry in objects} | {
            f"upload:{upload['Key']}" for upload in uploads
        }

    def stored_so_far() -> int:
        total = 0
        for upload in client.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
            parts = client.list_parts(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])
            total += sum(part["Size"] for part in parts.get("Parts", []))
        return total

    store = S3BlobStore(
        bucket,
        S3_PREFIX,
        endpoint_url=server.endpoint,
        region="us-east-1",
        session=server.session(),
        clock=clock,
    )
    return Harness(
        name="s3",
        store=store,
        clock=clock,
        contents=contents,
        stored_so_far=stored_so_far,
        folders_conflict=False,
    )


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    with S3Server() as server:
        yield server


@pytest.fixture
def clock() -> FakeClock:
    # The real time, so that the stores' own file and upload times compare with it.
    return FakeClock(datetime.now(UTC).replace(microsecond=0))


@pytest.fixture(params=["memory", "local", pytest.param("s3", marks=pytest.mark.slow)])
async def harness(
    request: pytest.FixtureRequest, clock: FakeClock, tmp_path: Path
) -> AsyncIterator[Harness]:
    if request.param == "memory":
        made = _memory_harness(clock)
    elif request.param == "local":
        made = _local_harness(clock, tmp_path / "blobs")
    else:
        server: S3Server = request.getfixturevalue("s3_server")
        bucket = server.new_bucket()
        made = _s3_harness(clock, server, bucket)
    try:
        yield made
    finally:
        await made.store.aclose()
        if request.param == "s3":
            server.drop_bucket(bucket)


async def _put(
    store: BlobStore, key: str, content: bytes, content_type: str = "text/plain"
) -> BlobInfo:
    async with await store.writer(key, content_type=content_type, max_size=len(content)) as writer:
        await writer.write(content)
        return await writer.commit()


async def _read(store: BlobStore, key: str, chunk_size: int = 65536) -> bytes:
    async with aclosing(store.read(key, chunk_size=chunk_size)) as chunks:
        return b"".join([chunk async for chunk in chunks])


async def _keys(store: BlobStore, prefix: str = "", older_than: datetime | None = None) -> set[str]:
    async with aclosing(store.list(prefix, older_than=older_than)) as infos:
        return {info.key async for info in infos}


def _sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


# Writing and reading


async def test_a_committed_blob_reads_back_with_its_size_and_hash(harness: Harness) -> None:
    store = harness.store
    content = b"%PDF-1.7 curriculum vitae\n" * 100

    async with await store.writer("sub_1/0", content_type="application/pdf", max_size=10_000) as w:
        for start in range(0, len(content), 1000):
            await w.write(content[start : start + 1000])
        assert w.size == len(content)
        info = await w.commit()

    assert info == BlobInfo(
        key="sub_1/0",
        size=len(content),
        sha256=_sha(content),
        content_type="application/pdf",
        created_at=harness.clock.now(),
    )
    assert await store.stat("sub_1/0") == info
    assert await _read(store, "sub_1/0") == content
    async with aclosing(store.read("sub_1/0", chunk_size=7)) as chunks:
        pieces = [chunk async for chunk in chunks]
    assert b"".join(pieces) == content
    assert all(0 < len(piece) <= 7 for piece in pieces)


async def test_an_empty_blob_is_a_blob(harness: Harness) -> None:
    async with await harness.store.writer("empty", content_type="text/plain", max_size=0) as w:
        info = await w.commit()

    assert info.size == 0
    assert info.sha256 == _sha(b"")
    assert await _read(harness.store, "empty") == b""
    assert await harness.store.stat("empty") == info


async def test_nothing_is_visible_under_the_key_before_the_commit(harness: Harness) -> None:
    store = harness.store
    async with await store.writer("sub_1/0", content_type="text/plain", max_size=100) as w:
        await w.write(b"not yet")

        assert await store.stat("sub_1/0") is None
        with pytest.raises(BlobNotFound):
            await _read(store, "sub_1/0")
        assert await _keys(store) == set()

        await w.commit()

    assert await _keys(store) == {"sub_1/0"}


async def test_a_blob_is_replaced_whole_by_a_later_commit(harness: Harness) -> None:
    await _put(harness.store, "sub_1/0", b"first version")
    harness.clock.advance(60)
    second = await _put(harness.store, "sub_1/0", b"second", "image/png")

    assert await _read(harness.store, "sub_1/0") == b"second"
    assert await harness.store.stat("sub_1/0") == second
    assert second.created_at == harness.clock.now()


async def test_a_25_mib_blob_streams_through_in_64_kib_chunks(harness: Harness) -> None:
    content = random.Random(25).randbytes(25 * MIB)
    chunk = 64 * 1024
    store = harness.store
    # The memory store keeps blobs in memory by design, and moto's server keeps the parts
    # in this very process: the allocation peak means something only for the local store.
    measure = harness.name == "local"
    writer = await store.writer("sub_1/cv.pdf", content_type="application/pdf", max_size=30 * MIB)
    async with writer:
        if measure:
            tracemalloc.start()
        try:
            for start in range(0, len(content), chunk):
                await writer.write(content[start : start + chunk])
                _assert_holds_less_than_a_part(writer)
            peak = tracemalloc.get_traced_memory()[1] if measure else 0
        finally:
            if measure:
                tracemalloc.stop()
        # Streamed as it came: all but the last part is in storage before the commit.
        assert harness.stored_so_far() >= len(content) - PART_SIZE
        info = await writer.commit()

    if measure:
        assert peak < PART_SIZE, f"writing held {peak} bytes at its peak"
    assert info.size == len(content)
    assert info.sha256 == _sha(content)
    digest = hashlib.sha256()
    async with aclosing(store.read("sub_1/cv.pdf", chunk_size=chunk)) as chunks:
        async for piece in chunks:
            assert len(piece) <= chunk
            digest.update(piece)
    assert digest.hexdigest() == _sha(content)


def _assert_holds_less_than_a_part(writer: BlobWriter) -> None:
    # The local and S3 writers say what they hold; the memory store holds everything.
    if isinstance(writer, LocalBlobWriter | S3BlobWriter):
        assert writer.buffered < PART_SIZE


async def test_concurrent_writers_to_different_keys_keep_their_own_content(
    harness: Harness,
) -> None:
    store = harness.store
    contents = {f"sub_{n}/0": bytes([n]) * (3000 + n) for n in range(8)}

    async def write(key: str, content: bytes) -> None:
        async with await store.writer(key, content_type="text/plain", max_size=10_000) as w:
            for start in range(0, len(content), 500):
                await w.write(content[start : start + 500])
                await anyio.lowlevel.checkpoint()  # the other writers go in between chunks
            await w.commit()

    async with anyio.create_task_group() as group:
        for key, content in contents.items():
            group.start_soon(write, key, content)

    for key, content in contents.items():
        assert await _read(store, key) == content
        stat_info = await store.stat(key)
        assert stat_info is not None
        assert stat_info.sha256 == _sha(content)
    assert await _keys(store) == set(contents)


# The size limit


async def test_a_blob_exactly_at_max_size_is_accepted(harness: Harness) -> None:
    async with await harness.store.writer("k", content_type="text/plain", max_size=100) as w:
        await w.write(b"x" * 60)
        await w.write(b"x" * 40)
        info = await w.commit()

    assert info.size == 100


async def test_one_byte_over_max_size_is_refused_and_leaves_nothing(harness: Harness) -> None:
    store = harness.store
    before = harness.contents()
    writer = await store.writer("k", content_type="text/plain", max_size=100)
    await writer.write(b"x" * 60)

    with pytest.raises(BlobTooLarge) as raised:
        await writer.write(b"x" * 41)

    assert raised.value.max_size == 100
    assert writer.size == 60  # the refused chunk was not taken
    with pytest.raises(BlobStoreError):
        await writer.commit()
    await writer.abort()
    assert await store.stat("k") is None
    assert harness.contents() == before


async def test_too_large_inside_the_block_aborts_a_streamed_upload(harness: Harness) -> None:
    # Past one part, S3 has a multipart upload under way that must be aborted too.
    before = harness.contents()

    async def write_too_much() -> None:
        async with await harness.store.writer(
            "k", content_type="text/plain", max_size=PART_SIZE + MIB
        ) as w:
            for _ in range(10):
                await w.write(b"x" * MIB)

    with pytest.raises(BlobTooLarge):
        await write_too_much()

    assert harness.contents() == before
    assert await _keys(harness.store, older_than=datetime.now(UTC) + timedelta(days=1)) == set()


# Aborting


async def test_abort_leaves_nothing_behind(harness: Harness) -> None:
    store = harness.store
    before = harness.contents()
    writer = await store.writer("sub_1/0", content_type="text/plain", max_size=20 * MIB)
    await writer.write(b"y" * (PART_SIZE + 1))

    await writer.abort()
    await writer.abort()

    assert harness.contents() == before
    assert await store.stat("sub_1/0") is None
    assert await _keys(store, older_than=datetime.now(UTC) + timedelta(days=1)) == set()
    with pytest.raises(BlobStoreError):
        await writer.write(b"more")


async def test_an_exception_inside_the_block_aborts(harness: Harness) -> None:
    before = harness.contents()

    async def fail_halfway() -> None:
        async with await harness.store.writer("k", content_type="text/plain", max_size=100) as w:
            await w.write(b"half of it")
            raise RuntimeError("client went away")

    with pytest.raises(RuntimeError, match="client went away"):
        await fail_halfway()

    assert harness.contents() == before
    assert await harness.store.stat("k") is None


async def test_leaving_the_block_without_a_commit_aborts(harness: Harness) -> None:
    before = harness.contents()

    async with await harness.store.writer("k", content_type="text/plain", max_size=100) as w:
        await w.write(b"forgotten")

    assert harness.contents() == before


async def test_a_cancelled_write_aborts(harness: Harness) -> None:
    before = harness.contents()

    with anyio.move_on_after(0.05):
        async with await harness.store.writer("k", content_type="text/plain", max_size=100) as w:
            await w.write(b"slow")
            await anyio.sleep(10)

    assert harness.contents() == before


async def test_abort_after_a_commit_keeps_the_blob(harness: Harness) -> None:
    writer = await harness.store.writer("k", content_type="text/plain", max_size=100)
    await writer.write(b"kept")
    await writer.commit()

    await writer.abort()

    assert await _read(harness.store, "k") == b"kept"
    with pytest.raises(BlobStoreError):
        await writer.commit()


# Deleting, stat, missing keys


async def test_delete_is_idempotent(harness: Harness) -> None:
    store = harness.store
    await _put(store, "sub_1/0", b"content")

    await store.delete("sub_1/0")
    await store.delete("sub_1/0")
    await store.delete("never/there")

    assert await store.stat("sub_1/0") is None
    with pytest.raises(BlobNotFound):
        await _read(store, "sub_1/0")
    assert await _keys(store) == set()
    assert harness.contents() == set()


async def test_stat_of_a_missing_key_is_none(harness: Harness) -> None:
    assert await harness.store.stat("sub_1/0") is None


async def test_reading_a_missing_key_raises_blob_not_found(harness: Harness) -> None:
    with pytest.raises(BlobNotFound) as raised:
        await _read(harness.store, "sub_1/0")

    assert raised.value.key == "sub_1/0"


# Keys

INVALID_KEYS = [
    "",
    "../x",
    "a/../../x",
    "..",
    "/abs",
    "/etc/passwd",
    "a//b",
    "a/",
    "./a",
    "a/./b",
    ".hidden",
    "a/.b",
    ".incoming/x",
    "a b",
    "a\\b",
    "a\x00b",
    "a\nb",
    "a?b",
    "a%2F..%2Fb",
    "café",
    "a" * 256,
    "a/" * 256 + "b",
]


@pytest.mark.parametrize("key", INVALID_KEYS, ids=repr)
async def test_invalid_keys_are_refused_everywhere(harness: Harness, key: str) -> None:
    store = harness.store
    before = harness.contents()

    with pytest.raises(InvalidBlobKey):
        await store.writer(key, content_type="text/plain", max_size=10)
    with pytest.raises(InvalidBlobKey):
        await store.stat(key)
    with pytest.raises(InvalidBlobKey):
        await _read(store, key)
    if not key.startswith(INCOMING_PREFIX):
        with pytest.raises(InvalidBlobKey):
            await store.delete(key)

    assert harness.contents() == before


async def test_the_longest_keys_are_accepted(harness: Harness) -> None:
    key = "a" * 255 + "/" + "b" * 254 + "/c"
    assert len(key) == 512

    await _put(harness.store, key, b"deep")

    assert await _read(harness.store, key) == b"deep"
    with pytest.raises(InvalidBlobKey):
        await harness.store.stat(key + "d")


@pytest.mark.parametrize("prefix", ["/", "../", "a//", "a b", "x/../"], ids=repr)
async def test_invalid_list_prefixes_are_refused(harness: Harness, prefix: str) -> None:
    with pytest.raises(InvalidBlobKey):
        await _keys(harness.store, prefix)


async def test_a_key_and_its_folder_cannot_both_be_blobs_on_a_file_system(
    harness: Harness,
) -> None:
    store = harness.store
    await _put(store, "a/b", b"inner")
    await _put(store, "c", b"outer")

    if not harness.folders_conflict:
        await _put(store, "a", b"both")
        await _put(store, "c/d", b"both")
        assert await _keys(store) == {"a", "a/b", "c", "c/d"}
        return
    with pytest.raises(InvalidBlobKey):
        await store.writer("a", content_type="text/plain", max_size=10)
    with pytest.raises(InvalidBlobKey):
        await store.writer("c/d", content_type="text/plain", max_size=10)
    # Deleting the inner blob frees the folder's name.
    await store.delete("a/b")
    await _put(store, "a", b"now a blob")
    assert await _read(store, "a") == b"now a blob"


# Listing and the sweep


async def test_list_filters_by_prefix_and_age(harness: Harness) -> None:
    store = harness.store
    start = harness.clock.now()
    early = {key: await _put(store, key, key.encode()) for key in ("sub_1/0", "sub_1/1")}
    harness.clock.advance(3600)
    late = {key: await _put(store, key, key.encode()) for key in ("sub_2/0", "sub_10/0", "x")}

    assert await _keys(store) == set(early) | set(late)
    assert await _keys(store, "sub_1/") == {"sub_1/0", "sub_1/1"}
    assert await _keys(store, "sub_1") == {"sub_1/0", "sub_1/1", "sub_10/0"}
    assert await _keys(store, "sub_1/1") == {"sub_1/1"}
    assert await _keys(store, "nothing/") == set()
    cut = start + timedelta(minutes=30)
    assert await _keys(store, older_than=cut) == set(early)
    assert await _keys(store, "sub_2/", older_than=cut) == set()
    async with aclosing(store.list("sub_")) as infos:
        assert {info.key: info async for info in infos} == {
            key: info for key, info in (early | late).items() if key.startswith("sub_")
        }


async def test_a_sweep_lists_an_unfinished_write_and_deletes_it(harness: Harness) -> None:
    store = harness.store
    before = harness.contents()
    writer = await store.writer("sub_1/0", content_type="text/plain", max_size=20 * MIB)
    # Past one part, so that S3 too has something stored (a smaller write is only in memory).
    await writer.write(b"z" * (PART_SIZE + 10))
    now = datetime.now(UTC)

    assert await _keys(store) == set()  # a plain listing shows blobs only
    assert await _keys(store, older_than=now - timedelta(days=1)) == set()  # not stale yet
    async with aclosing(store.list(older_than=now + timedelta(days=1))) as infos:
        stale = [info async for info in infos]
    assert len(stale) == 1
    assert stale[0].incoming
    assert stale[0].key.startswith(INCOMING_PREFIX)
    assert await _keys(store, "sub_", older_than=now + timedelta(days=1)) == set()

    await store.delete(stale[0].key)
    await store.delete(stale[0].key)

    assert harness.contents() == before

    async def finish() -> None:
        await writer.write(b"z" * PART_SIZE)
        await writer.commit()

    # The writer whose leftovers were swept cannot publish them any more.
    with pytest.raises(BlobStoreUnavailable):
        await finish()
    await writer.abort()
    assert harness.contents() == before
    assert await store.stat("sub_1/0") is None


# Health


async def test_a_working_store_answers_a_ping(harness: Harness) -> None:
    await harness.store.ping()


async def test_the_fakes_unavailable_switch_fails_like_an_unreachable_store() -> None:
    store = InMemoryBlobStore()
    store.unavailable = True

    with pytest.raises(BlobStoreUnavailable):
        await store.ping()
    with pytest.raises(StorageUnavailable):  # what the service turns into a 503
        await store.writer("k", content_type="text/plain", max_size=1)


# The local directory


async def test_local_writes_go_through_a_private_incoming_file(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    store = LocalBlobStore(root)
    async with await store.writer("sub_1/0", content_type="text/plain", max_size=100) as w:
        await w.write(b"private")
        (incoming,) = (root / ".incoming").iterdir()
        assert stat.S_IMODE(incoming.stat().st_mode) == 0o600
        info = await w.commit()

    assert list((root / ".incoming").iterdir()) == []
    raw = (root / "sub_1" / "0").read_bytes()
    assert raw[HEADER_SIZE:] == b"private"
    assert info.sha256.encode() in raw[:HEADER_SIZE]


async def test_local_small_writes_are_batched_in_memory_up_to_a_bound(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    async with await store.writer("k", content_type="text/plain", max_size=4 * MIB) as w:
        for _ in range(3 * 16):
            await w.write(b"b" * (64 * 1024))
            assert w.buffered < WRITE_BATCH
        await w.commit()


async def test_local_keys_cannot_reach_outside_the_root_through_a_planted_link(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "blobs", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_bytes(b"not a blob")
    (root / "folder").symlink_to(outside, target_is_directory=True)
    (root / "file").symlink_to(outside / "secret")
    store = LocalBlobStore(root)

    with pytest.raises(InvalidBlobKey):
        await store.writer("folder/x", content_type="text/plain", max_size=10)
    assert await store.stat("file") is None
    with pytest.raises(BlobNotFound):
        await _read(store, "file")
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]


async def test_local_damaged_blob_is_an_error_not_wrong_content(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    await _put(store, "k", b"0123456789")
    await _put(store, "good", b"fine")
    path = tmp_path / "k"
    path.write_bytes(path.read_bytes()[:-3])  # cut short, as by a failing disk

    with pytest.raises(BlobStoreError):
        await store.stat("k")
    with pytest.raises(BlobStoreError):
        await _read(store, "k")
    assert await _keys(store) == {"good"}


async def test_local_leftovers_of_a_crash_are_swept(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    await store.ping()
    leftover = tmp_path / ".incoming" / "0123abcd"
    leftover.write_bytes(b"\0" * HEADER_SIZE + b"half an upload")
    day_ago = (datetime.now(UTC) - timedelta(days=1)).timestamp()
    os.utime(leftover, (day_ago, day_ago))

    stale = [info async for info in store.list(older_than=datetime.now(UTC) - timedelta(hours=1))]

    assert [(info.key, info.size) for info in stale] == [(".incoming/0123abcd", 14)]
    await store.delete(stale[0].key)
    assert not leftover.exists()


async def test_local_store_on_an_unwritable_root_is_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_bytes(b"")
    store = LocalBlobStore(blocker / "blobs")

    with pytest.raises(BlobStoreUnavailable):
        await store.ping()
    with pytest.raises(BlobStoreUnavailable):
        await store.writer("k", content_type="text/plain", max_size=10)


# S3 failures


def _closed_port() -> int:
    with closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _unreachable_s3(endpoint: str) -> S3BlobStore:
    return S3BlobStore(
        "intake-blobs",
        endpoint_url=endpoint,
        region="us-east-1",
        session=fake_credentials_session(),
        connect_timeout=0.5,
        read_timeout=0.5,
        max_attempts=2,
    )


@pytest.mark.slow
async def test_an_unreachable_s3_endpoint_is_unavailable_quickly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = _unreachable_s3(f"http://127.0.0.1:{_closed_port()}")
    started = anyio.current_time()

    with pytest.raises(BlobStoreUnavailable) as raised:
        await store.ping()
    with pytest.raises(BlobStoreUnavailable):
        await store.stat("k")
    with pytest.raises(BlobStoreUnavailable):
        await _put(store, "k", b"content")

    assert anyio.current_time() - started < 10
    assert SECRET_KEY not in str(raised.value)
    assert SECRET_KEY not in caplog.text
    await store.aclose()


@pytest.mark.slow
async def test_an_s3_endpoint_that_never_answers_times_out() -> None:
    with closing(socket.socket()) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # connections are queued, never accepted nor answered
        store = _unreachable_s3(f"http://127.0.0.1:{listener.getsockname()[1]}")
        started = anyio.current_time()

        with pytest.raises(BlobStoreUnavailable):
            await store.stat("k")

        assert anyio.current_time() - started < 10
        await store.aclose()


class _ServerErrorHandler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        body = b"<Error><Code>InternalError</Code><Message>boom</Message></Error>"
        self.send_response(500)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    # The names BaseHTTPRequestHandler looks up.
    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _answer  # noqa: N815

    def log_message(self, format: str, *args: object) -> None:
        return


class _FailingS3(LocalHttpServer):
    handler: ClassVar[type[BaseHTTPRequestHandler]] = _ServerErrorHandler
    thread_name = "failing-s3"


@pytest.mark.slow
async def test_s3_server_errors_are_unavailable() -> None:
    server = _FailingS3().start()
    try:
        store = _unreachable_s3(f"http://127.0.0.1:{server.port}")
        with pytest.raises(BlobStoreUnavailable):
            await store.ping()
        with pytest.raises(BlobStoreUnavailable):
            await store.stat("k")
        with pytest.raises(BlobStoreUnavailable):
            await _put(store, "k", b"content")
        await store.aclose()
    finally:
        server.stop()


@pytest.mark.slow
async def test_s3_ping_fails_on_a_missing_bucket(s3_server: S3Server) -> None:
    store = S3BlobStore(
        "no-such-bucket-here",
        endpoint_url=s3_server.endpoint,
        region="us-east-1",
        session=s3_server.session(),
    )
    with pytest.raises(BlobStoreUnavailable):
        await store.ping()
    await store.aclose()


@pytest.mark.slow
async def test_s3_blobs_live_under_the_prefix_with_their_metadata(s3_server: S3Server) -> None:
    bucket = s3_server.new_bucket()
    try:
        harness = _s3_harness(FakeClock(), s3_server, bucket)
        info = await _put(harness.store, "sub_1/0", b"hello", "text/csv")
        await harness.store.aclose()

        head = s3_server.client().head_object(Bucket=bucket, Key=f"{S3_PREFIX}/sub_1/0")
        assert head["ContentType"] == "text/csv"
        assert head["Metadata"]["sha256"] == info.sha256
        assert head["Metadata"]["created-at"] == info.created_at.isoformat()
        assert harness.contents() == {f"{S3_PREFIX}/sub_1/0"}
    finally:
        s3_server.drop_bucket(bucket)


# Opening a store from its URL


def test_a_blob_url_opens_the_store_it_names(tmp_path: Path) -> None:
    assert isinstance(open_blob_store("memory://"), InMemoryBlobStore)
    local = open_blob_store(f"file://{tmp_path}/blobs")
    assert isinstance(local, LocalBlobStore)
    assert local.root == tmp_path / "blobs"
    relative = open_blob_store("data/blobs")
    assert isinstance(relative, LocalBlobStore)
    assert relative.root == Path.cwd() / "data" / "blobs"

    s3 = open_blob_store(
        "s3://intake-uploads/prod/blobs?endpoint=http://127.0.0.1:9000&region=eu-west-1"
    )
    assert isinstance(s3, S3BlobStore)
    assert (s3.bucket, s3.prefix) == ("intake-uploads", "prod/blobs/")
    assert s3.client.meta.endpoint_url == "http://127.0.0.1:9000"
    assert s3.client.meta.region_name == "eu-west-1"
    s3.client.close()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "empty"),
        ("ftp://host/path", "unknown blob store scheme"),
        ("file://otherhost/path", "local absolute path"),
        ("file://relative", "local absolute path"),
        ("memory://something", "takes nothing more"),
        ("s3://AKIA:secret@bucket/prefix", "environment variables"),
        ("s3://bucket/prefix?endpint=http://x", "unknown s3:// option 'endpint'"),
        ("s3://bucket?endpoint=ftp://x", "must be an http"),
        ("s3://bucket?addressing=sideways", "addressing is auto, virtual or path"),
        ("s3://Not_A_Bucket/prefix", "not an S3 bucket name"),
        ("s3://bucket/../prefix", "not a valid blob key prefix"),
    ],
)
def test_a_blob_url_that_cannot_be_used_is_refused(url: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        open_blob_store(url)


# Configuration


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, ".intake/blobs"),
        ({"INTAKE_DATABASE_URL": "sqlite:////var/lib/intake/intake.db"}, "/var/lib/intake/blobs"),
        ({"INTAKE_DATABASE_URL": "sqlite:///:memory:"}, None),
        ({"INTAKE_DATABASE_URL": "postgresql://db.internal/intake"}, None),
        (
            {"INTAKE_DATABASE_URL": "postgresql://db/intake", "INTAKE_BLOB_URL": "s3://b/p"},
            "s3://b/p",
        ),
        ({"INTAKE_BLOB_URL": "file:///srv/blobs"}, "file:///srv/blobs"),
    ],
)
def test_the_blob_url_defaults_beside_a_sqlite_database(
    environ: dict[str, str], expected: str | None
) -> None:
    assert Settings.from_env(environ).blob_url == expected
