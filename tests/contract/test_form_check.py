"""Every store's commit confirms the form as steps 1 and 2 found it (FormCheck): one
changed since then stores nothing, and the commit answers as those steps would now."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from attrs import evolve

from intake.adapters.form_cache import SQLITE_TTL
from intake.adapters.sqlite import open_sqlite_store
from intake.domain.errors import ErrorCode
from intake.domain.model import Form, FormMode
from intake.ports.store import Store
from intake.ports.submissions import CommitPlan, Committed, FormCheck, FormRefused
from tests.contract.builders import (
    FORM_ID,
    PERIOD,
    WORKSPACE_ID,
    form,
    plan,
    quota,
    seed,
    stored,
    submission,
    workspace,
)
from tests.contract.conftest import SqliteBackend

# Of the pipeline's ports: the in-memory pipeline is held to the SQL stores here too.
PIPELINE_PORTS = True

pytestmark = pytest.mark.anyio

KEY = "pk0form1"


def open_form() -> Form:
    return evolve(form(public_form_key=KEY), mode=FormMode.PUBLIC, enabled=True)


def checked(n: int, public_form_key: str | None = KEY) -> CommitPlan:
    return evolve(plan(submission(n), charge=quota(10)), check=FormCheck(FORM_ID, public_form_key))


async def nothing_stored(store: Store) -> None:
    assert await stored(store) == []
    assert await store.workspaces.usage(WORKSPACE_ID, PERIOD) == 0


async def test_an_unchanged_form_commits(store: Store) -> None:
    await seed(store, open_form())

    assert await store.submissions.commit(checked(1)) == Committed()
    assert await stored(store) == [submission(1)]


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ({"enabled": False}, ErrorCode.FORM_DISABLED),
        ({"public_form_key": "pk0rotated"}, ErrorCode.FORM_NOT_FOUND),
        ({"mode": FormMode.PROTECTED}, ErrorCode.UNAUTHORIZED),
        # Steps 1 and 2 in their order: a rotated key is not found, paused or not.
        ({"public_form_key": "pk0rotated", "enabled": False}, ErrorCode.FORM_NOT_FOUND),
        ({"mode": FormMode.PROTECTED, "enabled": False}, ErrorCode.UNAUTHORIZED),
    ],
)
async def test_a_form_changed_since_its_lookup_stores_nothing(
    store: Store, change: dict[str, Any], refusal: ErrorCode
) -> None:
    await seed(store, open_form())
    await store.forms.update(evolve(open_form(), **change))

    assert await store.submissions.commit(checked(1)) == FormRefused(refusal)
    await nothing_stored(store)


async def test_a_suspended_workspace_stores_nothing(store: Store) -> None:
    await seed(store, open_form())
    await store.workspaces.update(evolve(workspace(), active=False))

    assert await store.submissions.commit(checked(1)) == FormRefused(ErrorCode.FORM_DISABLED)
    await nothing_stored(store)


async def test_the_server_route_checks_that_the_form_accepts_not_its_key_or_mode(
    store: Store,
) -> None:
    await seed(store, open_form())
    await store.forms.update(
        evolve(open_form(), mode=FormMode.PROTECTED, public_form_key="pk0rotated")
    )

    assert await store.submissions.commit(checked(1, public_form_key=None)) == Committed()

    await store.forms.update(
        evolve(open_form(), mode=FormMode.PROTECTED, public_form_key="pk0rotated", enabled=False)
    )
    assert await store.submissions.commit(checked(2, public_form_key=None)) == FormRefused(
        ErrorCode.FORM_DISABLED
    )
    assert [s.submission_id for s in await stored(store)] == [submission(1).submission_id]


async def test_a_form_that_is_gone_is_not_found(store: Store) -> None:
    await seed(store, open_form())

    missing = evolve(checked(1), check=FormCheck("frm_missing", KEY))
    assert await store.submissions.commit(missing) == FormRefused(ErrorCode.FORM_NOT_FOUND)
    await nothing_stored(store)


async def test_sqlite_stores_nothing_for_a_form_changed_elsewhere_and_sees_it_soon(
    tmp_path: Path,
) -> None:
    """The embedded store with the `intake` command changing its file meanwhile: a
    request that looked the form up before the change is refused at the commit at once,
    and the lookups show the change within SQLITE_TTL (they are kept that long)."""
    backend = SqliteBackend(tmp_path)
    store = await open_sqlite_store(backend.url)
    try:
        await seed(store, open_form())
        before = await store.forms.resolve_public_key(KEY)
        assert before is not None
        backend.execute("UPDATE forms SET enabled = 0, name = 'Renamed'")

        assert await store.submissions.commit(checked(1)) == FormRefused(ErrorCode.FORM_DISABLED)
        await nothing_stored(store)
        await asyncio.sleep(SQLITE_TTL * 2)
        after = await store.forms.resolve_public_key(KEY)
        assert after is not None
        assert (after.form.enabled, after.form.name) == (False, "Renamed")
    finally:
        await store.close()
