"""The multipart reader on a form that takes files: the file events it hands on, the
upload policy's limits, and the text limits beside them."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.limits import KIB, MULTIPART_HEADROOM, PayloadLimits
from intake.domain.payload import (
    FileEnd,
    FileEvent,
    FileStart,
    MultipartReader,
    ParsedBody,
    parse_content_type,
)
from intake.domain.uploads import UploadPolicy
from intake.service.body import check_declared
from intake.service.messages import RawBody
from tests.property.world import stream

LIMITS = PayloadLimits()
BOUNDARY = "----intake-files-boundary"
MULTIPART = parse_content_type(f"multipart/form-data; boundary={BOUNDARY}")
POLICY = UploadPolicy()

PDF = b"%PDF-1.7\n" + b"0123456789" * 30
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def part(
    name: str, value: str | bytes, *, filename: str | None = None, content_type: str | None = None
) -> bytes:
    disposition = f'Content-Disposition: form-data; name="{name}"'
    if filename is not None:
        disposition += f'; filename="{filename}"'
    headers = [disposition.encode("utf-8")]
    if content_type is not None:
        headers.append(f"Content-Type: {content_type}".encode("latin-1"))
    body = value.encode("utf-8") if isinstance(value, str) else value
    return b"\r\n".join(headers) + b"\r\n\r\n" + body


def multipart(*parts: bytes) -> bytes:
    dash = b"--" + BOUNDARY.encode("ascii")
    return b"".join(dash + b"\r\n" + p + b"\r\n" for p in parts) + dash + b"--\r\n"


def read(
    body: bytes,
    policy: UploadPolicy | None = POLICY,
    *,
    limits: PayloadLimits = LIMITS,
    cuts: Sequence[int] | None = None,
    chunk_size: int | None = None,
) -> tuple[ParsedBody, list[FileEvent]]:
    """Feeds the body in chunks (every `chunk_size` bytes, or at `cuts`), taking the file
    events after every feed as the service does."""
    reader = MultipartReader(MULTIPART, limits, policy)
    if cuts is None:
        size = chunk_size or max(1, len(body))
        cuts = range(size, len(body), size)
    bounds = [0, *sorted(set(cuts)), len(body)]
    events: list[FileEvent] = []
    for start, end in itertools.pairwise(bounds):
        reader.feed(body[start:end])
        events += reader.take_file_events()
    parsed = reader.finish()
    events += reader.take_file_events()
    return parsed, events


def merged(events: Sequence[FileEvent]) -> list[FileEvent]:
    """The events with each file's bytes joined: how they are split depends on the
    chunks, what they say does not."""
    out: list[FileEvent] = []
    for event in events:
        if isinstance(event, bytes) and out and isinstance(out[-1], bytes):
            out[-1] += event
        elif not (isinstance(event, bytes) and not event):
            out.append(event)
    return out


@contextmanager
def refused_with(code: ErrorCode) -> Iterator[None]:
    with pytest.raises(IntakeError) as caught:
        yield
    assert caught.value.rejection.code is code


# --- the events ----------------------------------------------------------------------


def test_one_file_is_announced_streamed_and_ended() -> None:
    body = multipart(
        part("name", "Ada"),
        part("cv", PDF, filename="cv.pdf", content_type="application/pdf"),
        part("message", "Hello"),
    )

    parsed, events = read(body)

    assert merged(events) == [FileStart("cv", "cv.pdf", "application/pdf"), PDF, FileEnd()]
    assert parsed.data == {"name": "Ada", "message": "Hello"}  # the file is not a text field
    assert parsed.file_fields == ()


def test_a_file_part_without_a_content_type_declares_none() -> None:
    _, events = read(multipart(part("cv", PDF, filename="cv.pdf")))

    assert events[0] == FileStart("cv", "cv.pdf", None)


def test_the_file_name_is_cleaned_before_it_is_handed_on() -> None:
    _, events = read(multipart(part("cv", PDF, filename="C:\\Users\\ada\\..\\cv\u202e.pdf")))

    assert events[0] == FileStart("cv", "cv.pdf", None)


def test_a_file_with_an_empty_name_but_content_is_a_file_named_file() -> None:
    _, events = read(multipart(part("cv", PDF, filename="")))

    assert merged(events) == [FileStart("cv", "file", None), PDF, FileEnd()]


def test_an_empty_file_with_a_name_is_announced_and_ended_with_no_bytes() -> None:
    _, events = read(multipart(part("cv", b"", filename="empty.txt")))

    assert merged(events) == [FileStart("cv", "empty.txt", None), FileEnd()]


SEVERAL = multipart(
    part("name", "Ada"),
    part("cv", PDF, filename="cv.pdf", content_type="application/pdf"),
    part("photo", PNG, filename="me.png", content_type="image/png"),
    part("message", "Hello"),
    part("photo", b"second\r\n--not-a-boundary\r\n", filename="notes.txt"),
)
SEVERAL_EVENTS: list[FileEvent] = [
    FileStart("cv", "cv.pdf", "application/pdf"),
    PDF,
    FileEnd(),
    FileStart("photo", "me.png", "image/png"),
    PNG,
    FileEnd(),
    FileStart("photo", "notes.txt", None),
    b"second\r\n--not-a-boundary\r\n",
    FileEnd(),
]


def test_several_files_come_in_order_with_the_text_between_them_kept() -> None:
    parsed, events = read(SEVERAL)

    assert merged(events) == SEVERAL_EVENTS
    assert parsed.data == {"name": "Ada", "message": "Hello"}


def test_the_events_are_the_same_for_every_chunk_size() -> None:
    for size in range(1, len(SEVERAL) + 1):
        parsed, events = read(SEVERAL, chunk_size=size)
        assert merged(events) == SEVERAL_EVENTS, size
        assert parsed.data == {"name": "Ada", "message": "Hello"}, size


@given(st.lists(st.integers(1, len(SEVERAL) - 1), max_size=40))
def test_the_events_are_the_same_wherever_the_body_is_cut(cuts: list[int]) -> None:
    parsed, events = read(SEVERAL, cuts=cuts)

    assert merged(events) == SEVERAL_EVENTS
    assert parsed.data == {"name": "Ada", "message": "Hello"}


@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "cv"]), st.binary(max_size=300)),
        min_size=1,
        max_size=4,
    ),
    st.lists(st.integers(1, 2000), max_size=8),
)
def test_any_files_come_out_as_they_went_in(
    files: list[tuple[str, bytes]], cuts: list[int]
) -> None:
    body = multipart(
        *(part(name, content, filename=f"{i}.bin") for i, (name, content) in enumerate(files))
    )
    expected: list[FileEvent] = []
    for i, (name, content) in enumerate(files):
        expected += [FileStart(name, f"{i}.bin", None), *([content] if content else []), FileEnd()]

    _, events = read(body, cuts=[c for c in cuts if c < len(body)])

    assert merged(events) == expected


def test_events_are_handed_on_as_they_are_read_not_at_the_end() -> None:
    body = multipart(part("cv", PDF, filename="cv.pdf"), part("name", "Ada"))
    reader = MultipartReader(MULTIPART, LIMITS, POLICY)
    middle = body.index(PDF) + len(PDF) // 2

    reader.feed(body[:middle])
    first = reader.take_file_events()
    reader.feed(body[middle:])
    reader.finish()
    rest = reader.take_file_events()

    assert first[0] == FileStart("cv", "cv.pdf", None)
    assert b"".join(e for e in first if isinstance(e, bytes)) == PDF[: len(PDF) // 2]
    assert rest[-1] == FileEnd()
    assert reader.take_file_events() == []  # taken events are not handed on twice


def test_a_file_in_a_control_field_is_counted_but_never_handed_on() -> None:
    body = multipart(part("_x", PDF, filename="x.pdf"), part("name", "Ada"))

    parsed, events = read(body)

    assert events == []
    assert parsed.data == {"name": "Ada"}
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read(body, UploadPolicy(max_file_size=len(PDF) - 1))
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read(
            multipart(part("_x", PDF, filename="x.pdf"), part("cv", PDF, filename="cv.pdf")),
            UploadPolicy(max_files=1),
        )


def test_an_empty_file_input_is_no_file_at_all() -> None:
    """What a browser sends for an optional file input left empty: no name, no bytes."""
    body = multipart(part("name", "Ada"), part("cv", b"", filename=""))

    parsed, events = read(body)

    assert events == []
    assert parsed.data == {"name": "Ada"}
    assert parsed.file_fields == ()
    # Nor does it count as one of the files.
    read(
        multipart(part("cv", b"", filename=""), part("a", PDF, filename="a.pdf")),
        UploadPolicy(max_files=1),
    )


# --- the policy's limits -------------------------------------------------------------


def _files(count: int, content: bytes = PDF) -> bytes:
    return multipart(*(part(f"f{i}", content, filename=f"{i}.pdf") for i in range(count)))


def test_as_many_files_as_the_policy_allows_pass() -> None:
    _, events = read(_files(3), UploadPolicy(max_files=3))

    assert sum(isinstance(e, FileStart) for e in events) == 3


def test_one_file_more_than_the_policy_allows_is_too_large() -> None:
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read(_files(4), UploadPolicy(max_files=3))


@pytest.mark.parametrize("chunk_size", [None, 1, 7, 64])
def test_a_file_of_exactly_the_largest_size_passes(chunk_size: int | None) -> None:
    _, events = read(_files(1), UploadPolicy(max_file_size=len(PDF)), chunk_size=chunk_size)

    assert merged(events)[1] == PDF


@pytest.mark.parametrize("chunk_size", [None, 1, 7, 64])
def test_a_file_one_byte_over_the_largest_size_is_too_large(chunk_size: int | None) -> None:
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read(_files(1), UploadPolicy(max_file_size=len(PDF) - 1), chunk_size=chunk_size)


def test_no_bytes_past_the_file_size_limit_are_handed_on() -> None:
    reader = MultipartReader(MULTIPART, LIMITS, UploadPolicy(max_file_size=100))
    body = _files(1)
    handed = 0
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        for at in range(0, len(body), 16):
            reader.feed(body[at : at + 16])
            handed += sum(len(e) for e in reader.take_file_events() if isinstance(e, bytes))
    handed += sum(len(e) for e in reader.take_file_events() if isinstance(e, bytes))

    assert handed <= 100


def test_the_files_together_may_reach_the_total_size() -> None:
    policy = UploadPolicy(max_file_size=len(PDF), max_total_size=3 * len(PDF))

    _, events = read(_files(3), policy)

    assert sum(len(e) for e in events if isinstance(e, bytes)) == 3 * len(PDF)


def test_files_together_over_the_total_size_are_too_large() -> None:
    policy = UploadPolicy(max_file_size=len(PDF), max_total_size=3 * len(PDF) - 1)

    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read(_files(3), policy)


def test_file_bytes_do_not_count_against_the_text_limits() -> None:
    limits = PayloadLimits(max_body=1 * KIB, max_value=1 * KIB)
    big = b"x" * (8 * KIB)

    parsed, events = read(
        multipart(part("name", "Ada"), part("cv", big, filename="cv.txt")), limits=limits
    )

    assert parsed.data == {"name": "Ada"}
    assert merged(events)[1] == big


def test_the_text_limits_still_apply_beside_files() -> None:
    limits = PayloadLimits(max_body=1 * KIB, max_value=100, max_fields=3)
    file_part = part("cv", PDF, filename="cv.pdf")

    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read(multipart(file_part, part("message", "x" * 101)), limits=limits)
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read(multipart(file_part, *(part(f"t{i}", "x" * 90) for i in range(12))), limits=limits)
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        read(multipart(file_part, part("a", "1"), part("b", "2"), part("c", "3")), limits=limits)


# --- without a policy ----------------------------------------------------------------


def test_without_a_policy_a_file_is_noted_by_name_and_nothing_is_handed_on() -> None:
    body = multipart(part("name", "Ada"), part("cv", PDF, filename="cv.pdf"))

    parsed, events = read(body, None)

    assert events == []
    assert parsed.file_fields == ("cv",)
    assert parsed.data == {"name": "Ada", "cv": ""}


def test_without_a_policy_the_upload_limits_do_not_apply() -> None:
    parsed, _ = read(_files(UploadPolicy().max_files + 5), None)

    assert len(parsed.file_fields) == UploadPolicy().max_files + 5


def test_without_a_policy_an_empty_file_input_is_still_no_file() -> None:
    parsed, _ = read(multipart(part("name", "Ada"), part("cv", b"", filename="")), None)

    assert parsed.file_fields == ()
    assert parsed.data == {"name": "Ada"}


# --- the declared length -------------------------------------------------------------


def _declared(length: int) -> RawBody:
    """A body whose declared length is checked before any of it is read."""
    return RawBody(f"multipart/form-data; boundary={BOUNDARY}", length, stream([]))


def test_a_form_that_takes_files_takes_a_body_as_large_as_its_files_and_text() -> None:
    policy = UploadPolicy(max_total_size=5 * KIB * KIB)
    ceiling = LIMITS.max_body + policy.max_total_size + MULTIPART_HEADROOM

    assert LIMITS.upload_body_ceiling(policy.max_total_size) == ceiling
    check_declared(_declared(ceiling), LIMITS, policy)
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        check_declared(_declared(ceiling + 1), LIMITS, policy)


def test_a_form_without_files_keeps_the_multipart_limit() -> None:
    check_declared(_declared(LIMITS.max_multipart_body), LIMITS)
    with refused_with(ErrorCode.PAYLOAD_TOO_LARGE):
        check_declared(_declared(LIMITS.max_multipart_body + 1), LIMITS)
