"""Sizes and counts as the dashboard's pages write them: a file's size in the largest unit
under 1,024 of it, a settings box's size exactly, what an owner types read back in
bytes, and a tab's count capped."""

from __future__ import annotations

import pytest

from intake.entrypoints.http.dashboard.wording import file_size, size_field, tab_count, typed_size
from intake.service.admin import COUNT_LIMIT


@pytest.mark.parametrize(
    ("size", "shown"),
    [
        (0, "0 bytes"),
        (1, "1 byte"),
        (1023, "1,023 bytes"),
        (1024, "1.0 KB"),
        (1536, "1.5 KB"),
        (10 * 1024, "10 KB"),
        (1024 * 1024 - 1, "1,024 KB"),
        (1024 * 1024, "1.0 MB"),
        (25 * 1024 * 1024, "25 MB"),
        (3 * 1024**3, "3.0 GB"),
        (5000 * 1024**4, "5,000 TB"),
        ("n/a", "n/a"),
        (True, "True"),
    ],
)
def test_a_file_size_reads_in_bytes_kb_mb_or_gb(size: object, shown: str) -> None:
    assert file_size(size) == shown


@pytest.mark.parametrize(
    ("size", "shown"),
    [(1500, "1500"), (1024, "1 KB"), (1536 * 1024, "1536 KB"), (10 * 1024**2, "10 MB")],
)
def test_a_settings_size_is_shown_exactly_and_reads_back(size: int, shown: str) -> None:
    assert size_field(size) == shown
    assert typed_size(shown) == size


@pytest.mark.parametrize(
    ("typed", "size"),
    [
        ("2000", 2000),
        (" 10 MB ", 10 * 1024**2),
        ("1.5mb", 1536 * 1024),
        ("512 KB", 512 * 1024),
        ("1 GB", 1024**3),
        ("7 bytes", 7),
        ("0.5 KB", 512),
    ],
)
def test_a_typed_size_is_read_in_bytes(typed: str, size: int) -> None:
    assert typed_size(typed) == size


@pytest.mark.parametrize("typed", ["ten", "", "1.5", "0.1 KB", "-1 MB", "10 parsecs", "1e3"])
def test_what_is_no_whole_size_is_left_for_the_reader_to_refuse(typed: str) -> None:
    assert typed_size(typed) == typed


def test_a_tab_count_stops_at_the_limit() -> None:
    assert tab_count(0) == "0"
    assert tab_count(1234) == "1,234"
    assert tab_count(COUNT_LIMIT) == f"{COUNT_LIMIT:,}"
    assert tab_count(COUNT_LIMIT + 1) == f"{COUNT_LIMIT:,}+"
