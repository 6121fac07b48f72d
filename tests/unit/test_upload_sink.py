"""The upload sink on the in-memory blob store: it tells each file's type from its head,
streams what the form takes into the store under `<submission_id>/<index>`, notes what
it does not take, and takes everything back when the request is not stored."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest

from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.domain import ids
from intake.domain.errors import ErrorCode, IntakeError, StorageUnavailable
from intake.domain.payload import FileEnd, FileEvent, FileStart
from intake.domain.sniffing import SNIFF_BYTES
from intake.domain.uploads import TYPE_NOT_ACCEPTED, StoredFile, UploadPolicy, file_key
from intake.service.uploads import UploadSink

pytestmark = pytest.mark.anyio

SUBMISSION_ID = ids.submission_id(1_768_478_400_000, bytes(range(12)))
PDF = b"%PDF-1.7\n" + b"0123456789abcdef" * 64
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00\xb8" + b"\x00" * 64


def sink(policy: UploadPolicy | None = None) -> tuple[UploadSink, InMemoryBlobStore]:
    blobs = InMemoryBlobStore()
    return UploadSink(blobs, policy or UploadPolicy(), SUBMISSION_ID), blobs


def file_events(
    field: str, name: str, content: bytes, *, declared: str | None = None, chunk: int = 1000
) -> list[FileEvent]:
    pieces = [content[at : at + chunk] for at in range(0, len(content), chunk)]
    return [FileStart(field, name, declared), *pieces, FileEnd()]


def content_of(blobs: InMemoryBlobStore, key: str) -> bytes:
    return blobs.blobs[key][1]


def stored(field: str, name: str, content: bytes, content_type: str, index: int) -> StoredFile:
    return StoredFile(
        field=field,
        name=name,
        size=len(content),
        content_type=content_type,
        sha256=hashlib.sha256(content).hexdigest(),
        key=file_key(SUBMISSION_ID, index),
    )


async def test_a_file_the_form_takes_is_stored_with_its_sniffed_type() -> None:
    upload, blobs = sink()

    await upload.take(file_events("cv", "cv.pdf", PDF, declared="application/octet-stream"))

    assert upload.files == (stored("cv", "cv.pdf", PDF, "application/pdf", 0),)
    assert content_of(blobs, f"{SUBMISSION_ID}/0") == PDF
    assert blobs.blobs[f"{SUBMISSION_ID}/0"][0].content_type == "application/pdf"
    assert upload.refused == {}
    assert blobs.incoming == {}


async def test_a_small_file_is_sniffed_when_it_ends() -> None:
    upload, blobs = sink()

    await upload.take([FileStart("cv", "cv.pdf", None), PDF[:10], PDF[10:100]])

    assert blobs.incoming == {}  # nothing is written before the type is known
    assert blobs.blobs == {}
    await upload.take([FileEnd()])
    assert upload.files == (stored("cv", "cv.pdf", PDF[:100], "application/pdf", 0),)


async def test_a_large_file_is_sniffed_at_the_head_size_and_then_streamed() -> None:
    upload, blobs = sink()
    content = PDF + b"x" * (3 * SNIFF_BYTES)

    await upload.take([FileStart("cv", "cv.pdf", None), content[: SNIFF_BYTES - 1]])
    assert blobs.incoming == {}
    await upload.take([content[SNIFF_BYTES - 1 : SNIFF_BYTES]])
    (incoming,) = blobs.incoming.values()  # the write began with the head
    assert incoming.size == SNIFF_BYTES
    await upload.take([content[SNIFF_BYTES : 2 * SNIFF_BYTES]])
    assert incoming.size == 2 * SNIFF_BYTES  # and goes on chunk by chunk
    await upload.take([content[2 * SNIFF_BYTES :], FileEnd()])

    assert upload.files == (stored("cv", "cv.pdf", content, "application/pdf", 0),)
    assert content_of(blobs, f"{SUBMISSION_ID}/0") == content


async def test_a_head_that_arrives_in_one_large_chunk_is_kept_whole() -> None:
    upload, blobs = sink()
    content = b"plain text\n" * (3 * SNIFF_BYTES // 11)

    await upload.take([FileStart("notes", "notes.txt", None), content, FileEnd()])

    assert upload.files[0].content_type == "text/plain"
    assert content_of(blobs, f"{SUBMISSION_ID}/0") == content


async def test_only_the_head_decides_the_type() -> None:
    upload, _ = sink()
    text_then_binary = b"a" * SNIFF_BYTES + b"\x00\x01\x02"
    binary_in_the_head = b"a" * (SNIFF_BYTES - 10) + b"\x00" + b"a" * 100

    await upload.take(file_events("a", "a.txt", text_then_binary, chunk=4096))
    await upload.take(file_events("b", "b.txt", binary_in_the_head, chunk=4096))

    assert [f.content_type for f in upload.files] == ["text/plain"]
    assert upload.refused == {"b": TYPE_NOT_ACCEPTED}


async def test_a_character_split_at_the_head_size_is_still_text() -> None:
    upload, _ = sink()
    content = ("x" * (SNIFF_BYTES - 1) + "€ and more").encode("utf-8")

    await upload.take(file_events("notes", "notes.txt", content, chunk=SNIFF_BYTES))

    assert upload.files[0].content_type == "text/plain"


async def test_a_type_the_form_does_not_take_is_noted_and_nothing_is_stored() -> None:
    upload, blobs = sink()

    await upload.take(file_events("cv", "cv.pdf", EXE, declared="application/pdf"))

    assert upload.files == ()
    assert upload.refused == {"cv": TYPE_NOT_ACCEPTED}
    assert blobs.blobs == {}
    assert blobs.incoming == {}


async def test_a_large_refused_file_is_dropped_without_a_write() -> None:
    upload, blobs = sink()
    content = bytes(range(256)) * (4 * SNIFF_BYTES // 256)

    await upload.take(file_events("cv", "cv.bin", content, chunk=SNIFF_BYTES // 2))

    assert upload.refused == {"cv": TYPE_NOT_ACCEPTED}
    assert blobs.blobs == {}
    assert blobs.incoming == {}


async def test_keys_follow_the_positions_of_the_files_that_are_kept() -> None:
    upload, blobs = sink(UploadPolicy(allowed_types=("image/*", "application/pdf")))
    events: Sequence[FileEvent] = [
        *file_events("cv", "cv.pdf", PDF),
        *file_events("photo", "evil.png", EXE, declared="image/png"),
        *file_events("photo", "me.png", PNG),
        *file_events("cv", "again.pdf", PDF[:50]),
    ]

    await upload.take(events)

    assert upload.files == (
        stored("cv", "cv.pdf", PDF, "application/pdf", 0),
        stored("photo", "me.png", PNG, "image/png", 1),
        stored("cv", "again.pdf", PDF[:50], "application/pdf", 2),
    )
    assert sorted(blobs.blobs) == [file_key(SUBMISSION_ID, i) for i in range(3)]
    for index, item in enumerate(upload.files):
        assert item.key == f"{SUBMISSION_ID}/{index}"
        assert hashlib.sha256(content_of(blobs, item.key)).hexdigest() == item.sha256
    assert upload.refused == {"photo": TYPE_NOT_ACCEPTED}


async def test_an_empty_file_is_of_no_known_type() -> None:
    upload, blobs = sink()

    await upload.take([FileStart("cv", "empty.pdf", "application/pdf"), FileEnd()])

    assert upload.refused == {"cv": TYPE_NOT_ACCEPTED}
    assert blobs.blobs == {}


async def test_an_empty_file_is_stored_when_the_form_takes_anything() -> None:
    upload, blobs = sink(UploadPolicy(allowed_types=("*/*",)))

    await upload.take([FileStart("cv", "empty", None), FileEnd()])

    assert upload.files == (stored("cv", "empty", b"", "application/octet-stream", 0),)
    assert content_of(blobs, f"{SUBMISSION_ID}/0") == b""


async def test_discard_deletes_the_stored_files_and_aborts_the_open_write() -> None:
    upload, blobs = sink()
    await upload.take(file_events("cv", "cv.pdf", PDF))
    await upload.take(file_events("photo", "me.png", PNG))
    big = PDF + b"x" * (2 * SNIFF_BYTES)
    await upload.take([FileStart("scan", "scan.pdf", None), big])  # still being received
    assert len(blobs.blobs) == 2
    assert len(blobs.incoming) == 1

    await upload.discard()

    assert blobs.blobs == {}
    assert blobs.incoming == {}
    assert upload.files == ()


async def test_discard_leaves_other_blobs_alone() -> None:
    upload, blobs = sink()
    other = UploadSink(blobs, UploadPolicy(), ids.submission_id(1, bytes(12)))
    await other.take(file_events("cv", "cv.pdf", PDF))
    await upload.take(file_events("cv", "cv.pdf", PDF))

    await upload.discard()

    assert list(blobs.blobs) == [other.files[0].key]


async def test_discard_is_best_effort_when_the_store_is_down() -> None:
    upload, blobs = sink()
    await upload.take(file_events("cv", "cv.pdf", PDF))
    await upload.take([FileStart("scan", "scan.pdf", None), PDF * 16])
    blobs.unavailable = True

    await upload.discard()  # what it cannot delete is left to the sweep

    blobs.unavailable = False
    assert list(blobs.blobs) == [f"{SUBMISSION_ID}/0"]


async def test_the_store_refuses_a_file_past_the_size_limit_as_too_large() -> None:
    """The reader counts first; the store's own limit is the second guard."""
    upload, blobs = sink(UploadPolicy(max_file_size=SNIFF_BYTES + 10))
    content = PDF + b"x" * (2 * SNIFF_BYTES)

    with pytest.raises(IntakeError) as caught:
        await upload.take(file_events("cv", "cv.pdf", content, chunk=SNIFF_BYTES))

    assert caught.value.rejection.code is ErrorCode.PAYLOAD_TOO_LARGE
    await upload.discard()
    assert blobs.blobs == {}
    assert blobs.incoming == {}


async def test_a_store_that_cannot_be_reached_is_storage_unavailable() -> None:
    upload, blobs = sink()
    blobs.unavailable = True

    with pytest.raises(StorageUnavailable):
        await upload.take(file_events("cv", "cv.pdf", PDF))


async def test_a_text_type_declared_as_no_mime_type_name_is_stored_as_plain_text() -> None:
    """A form that takes any text must not fail on a declaration that is no type name:
    the blob store refuses such a content type, and the request would end in a 500."""
    upload, blobs = sink(UploadPolicy(allowed_types=("text/*",)))

    await upload.take(file_events("notes", "notes.txt", b"hello", declared="text/\xe9"))
    await upload.take(file_events("more", "more.txt", b"hello", declared="text/a\tb"))

    assert [f.content_type for f in upload.files] == ["text/plain", "text/plain"]
    assert len(blobs.blobs) == 2
