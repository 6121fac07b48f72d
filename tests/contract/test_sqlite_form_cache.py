"""The SQLite store keeps step 1's lookups briefly (SQLITE_TTL): a change made through
the same store is seen at once; one made by another process (`other`, a second store on
the same file) within SQLITE_TTL; a form that steps 1 and 2 refuse is never kept."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from attrs import evolve

from intake.adapters.form_cache import SQLITE_TTL
from intake.adapters.sqlite import SqliteStore, open_sqlite_store
from intake.domain.model import Form, FormMode
from tests.contract.builders import form as built_form
from tests.contract.builders import seed

pytestmark = pytest.mark.anyio

KEY = "pk0form1"


def _form() -> Form:
    return evolve(built_form(public_form_key=KEY), mode=FormMode.PUBLIC, enabled=True)


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[tuple[SqliteStore, SqliteStore]]:
    url = f"sqlite:///{tmp_path / 'intake.db'}"
    serving = await open_sqlite_store(url)
    other = await open_sqlite_store(url)
    try:
        await seed(other, _form())
        yield serving, other
    finally:
        await serving.close()
        await other.close()


async def _name(store: SqliteStore) -> str | None:
    found = await store.forms.resolve_public_key(KEY)
    return None if found is None else found.form.name


async def test_a_change_through_the_same_store_is_seen_at_once(
    stores: tuple[SqliteStore, SqliteStore],
) -> None:
    serving, _ = stores
    assert await _name(serving) == _form().name
    await serving.forms.update(evolve(_form(), name="Renamed"))
    assert await _name(serving) == "Renamed"
    await serving.forms.update(evolve(_form(), enabled=False))
    found = await serving.forms.resolve_public_key(KEY)
    assert found is not None
    assert not found.form.enabled


async def test_another_process_change_is_seen_within_the_ttl(
    stores: tuple[SqliteStore, SqliteStore],
) -> None:
    serving, other = stores
    assert await _name(serving) == _form().name  # kept now
    await other.forms.update(evolve(_form(), name="Changed elsewhere"))
    await asyncio.sleep(SQLITE_TTL * 2)
    assert await _name(serving) == "Changed elsewhere"


async def test_a_refused_form_is_not_kept(stores: tuple[SqliteStore, SqliteStore]) -> None:
    serving, other = stores
    await other.forms.update(evolve(_form(), enabled=False))
    found = await serving.forms.resolve_public_key(KEY)
    assert found is not None
    assert not found.form.enabled
    await other.forms.update(_form())  # resumed elsewhere: served at once, nothing kept
    found = await serving.forms.resolve_public_key(KEY)
    assert found is not None
    assert found.form.enabled
