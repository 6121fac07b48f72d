"""Body parsing faults the fuzzers found (tests/fuzz): each input is now refused with the
spec's code, or read the same way however it is split into chunks."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intake.domain.errors import ErrorCode, IntakeError
from intake.domain.limits import PayloadLimits
from intake.domain.payload import MultipartReader, ParsedBody, parse_complete, parse_content_type

LIMITS = PayloadLimits()
MULTIPART = parse_content_type("multipart/form-data; boundary=b")


def _code(error: pytest.ExceptionInfo[IntakeError]) -> ErrorCode:
    return error.value.rejection.code


def _read(body: bytes, cuts: list[int]) -> ParsedBody | ErrorCode:
    offsets = sorted({0, len(body), *(c for c in cuts if 0 < c < len(body))})
    reader = MultipartReader(MULTIPART, LIMITS)
    try:
        for start, end in itertools.pairwise(offsets):
            reader.feed(body[start:end])
        return reader.finish()
    except IntakeError as error:
        return error.rejection.code


@pytest.mark.parametrize(
    "header",
    [
        "application/json; charset=utf\x00-8",
        "application/x-www-form-urlencoded; charset=\x00",
        'multipart/form-data; boundary=b; charset="latin\x001"',
    ],
)
def test_a_charset_name_holding_nul_is_an_unsupported_type(header: str) -> None:
    with pytest.raises(IntakeError) as refused:
        parse_content_type(header)

    assert _code(refused) is ErrorCode.UNSUPPORTED_CONTENT_TYPE


def test_a_part_charset_name_holding_nul_is_malformed() -> None:
    body = (
        b'--b\r\nContent-Disposition: form-data; name="a"\r\n'
        b"Content-Type: text/plain; charset=utf\x00-8\r\n\r\nx\r\n--b--\r\n"
    )

    with pytest.raises(IntakeError) as refused:
        parse_complete(body, MULTIPART, LIMITS)

    assert _code(refused) is ErrorCode.MALFORMED_REQUEST


@pytest.mark.parametrize("length", [257, 1_000, 70_000])
def test_a_boundary_longer_than_the_parser_takes_is_malformed(length: int) -> None:
    content_type = parse_content_type(f"multipart/form-data; boundary={'b' * length}")

    with pytest.raises(IntakeError) as refused:
        MultipartReader(content_type, LIMITS)

    assert _code(refused) is ErrorCode.MALFORMED_REQUEST


PART = b'--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--b--\r\n'


@pytest.mark.parametrize(
    "preamble", [b"", b"\r\n", b"\n%P", b"junk", b"\r\njunk with - and --c\r\n", b"-" * 3]
)
def test_a_preamble_before_the_first_boundary_is_ignored(preamble: bytes) -> None:
    parsed = parse_complete(preamble + PART, MULTIPART, LIMITS)

    assert parsed.data == {"a": "x"}


@given(
    preamble=st.binary(max_size=12).filter(lambda p: b"--b" not in p),
    cuts=st.lists(st.integers(0, 80), max_size=6),
)
def test_a_multipart_body_reads_the_same_however_it_is_split(
    preamble: bytes, cuts: list[int]
) -> None:
    # The fuzzer's find: `\n%P--b--\r\n` was read whole, yet refused when split after
    # the newline, as the parser skipped the preamble only within one chunk.
    for body in (preamble + PART, preamble + b"--b--\r\n"):
        assert _read(body, cuts) == _read(body, [])


def test_a_body_without_any_boundary_is_still_malformed() -> None:
    for body in (b"", b"no boundary here", b"-", b"--c\r\n"):
        assert _read(body, []) is ErrorCode.MALFORMED_REQUEST
        assert _read(body, list(range(len(body)))) is ErrorCode.MALFORMED_REQUEST
