"""Store.secrets: a secret made once and shared by every process of a deployment (the
key that signs download links). The first candidate stored wins, whoever races."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from intake.adapters.sqlite import open_sqlite_store
from intake.ports.store import Store
from tests.contract.conftest import PostgresBackend

pytestmark = pytest.mark.anyio

NAME = "download-links"
# NUL and high bytes: a store that keeps the value as text loses them.
FIRST = bytes(range(256))[:40] + b"\x00\xff" * 8
SECOND = b"\x80" * 32


async def test_the_first_candidate_is_stored_and_returned(store: Store) -> None:
    assert await store.secrets.get_or_create(NAME, FIRST) == FIRST


async def test_a_later_candidate_gets_the_first_value(store: Store) -> None:
    await store.secrets.get_or_create(NAME, FIRST)

    assert await store.secrets.get_or_create(NAME, SECOND) == FIRST
    assert await store.secrets.get_or_create(NAME, SECOND) == FIRST


async def test_each_name_has_its_own_secret(store: Store) -> None:
    assert await store.secrets.get_or_create(NAME, FIRST) == FIRST
    assert await store.secrets.get_or_create("other-1", SECOND) == SECOND
    assert await store.secrets.get_or_create(NAME, SECOND) == FIRST


async def test_concurrent_calls_agree_on_one_candidate(store: Store) -> None:
    candidates = [os.urandom(32) for _ in range(20)]

    values = await asyncio.gather(*(store.secrets.get_or_create(NAME, c) for c in candidates))

    assert len(set(values)) == 1
    assert values[0] in candidates
    assert await store.secrets.get_or_create(NAME, SECOND) == values[0]


@pytest.mark.parametrize("name", ["download-links", "a", "x" * 64, "key-2026-01", "0"])
async def test_a_name_of_1_to_64_lowercase_letters_digits_and_dashes_is_taken(
    store: Store, name: str
) -> None:
    assert await store.secrets.get_or_create(name, FIRST) == FIRST


@pytest.mark.parametrize(
    "name", ["", "x" * 65, "Download", "download_links", "down links", "dé", "a/b", "a\n"]
)
async def test_another_name_is_refused(store: Store, name: str) -> None:
    with pytest.raises(ValueError, match="name"):
        await store.secrets.get_or_create(name, FIRST)


async def test_a_candidate_under_32_bytes_is_refused_and_nothing_stored(store: Store) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        await store.secrets.get_or_create(NAME, b"k" * 31)
    with pytest.raises(ValueError, match="32 bytes"):
        await store.secrets.get_or_create(NAME, b"")

    assert await store.secrets.get_or_create(NAME, SECOND) == SECOND
    # Refused even when a secret is stored: a caller's bug shows on any database.
    with pytest.raises(ValueError, match="32 bytes"):
        await store.secrets.get_or_create(NAME, b"k" * 31)


# Several processes: stores of their own on one database


async def test_two_sqlite_stores_on_one_file_agree_and_the_file_keeps_it(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'intake.db'}"
    one = await open_sqlite_store(url)
    two = await open_sqlite_store(url)
    try:
        candidates = [os.urandom(32) for _ in range(10)]
        values = await asyncio.gather(
            *(
                (one if n % 2 else two).secrets.get_or_create(NAME, c)
                for n, c in enumerate(candidates)
            )
        )
        assert len(set(values)) == 1
        assert values[0] in candidates
    finally:
        await one.close()
        await two.close()

    again = await open_sqlite_store(url)
    try:
        assert await again.secrets.get_or_create(NAME, SECOND) == values[0]
    finally:
        await again.close()


@pytest.mark.services
async def test_two_postgres_stores_agree(postgres_url: str) -> None:
    backend = PostgresBackend(postgres_url)
    one = await backend.open_postgres()
    two = await backend.open_postgres()
    try:
        candidates = [os.urandom(32) for _ in range(20)]
        values = await asyncio.gather(
            *(
                (one if n % 2 else two).secrets.get_or_create(NAME, c)
                for n, c in enumerate(candidates)
            )
        )

        assert len(set(values)) == 1
        assert values[0] in candidates
        assert await one.secrets.get_or_create(NAME, SECOND) == values[0]
        assert await two.secrets.get_or_create(NAME, FIRST) == values[0]
    finally:
        await one.close()
        await two.close()
