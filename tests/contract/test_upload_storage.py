"""What the stores keep of uploads: a form's upload policy, a submission's files (the
row that links its blobs, written by the commit or not at all), and `existing`, the
sweep's check that a blob's submission is stored (docs/uploads.md)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
from attrs import evolve

from intake.adapters.postgres import open_postgres_store
from intake.adapters.postgres import submissions as pg
from intake.adapters.postgres.mapping import commit_params
from intake.adapters.sqlite import open_sqlite_store
from intake.adapters.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from intake.domain.errors import StorageUnavailable
from intake.domain.listing import SubmissionFilter
from intake.domain.model import SubmissionStatus
from intake.domain.uploads import UploadPolicy
from intake.ports.forms import FormContext
from intake.ports.store import Store
from intake.ports.submissions import (
    MAX_EXISTING_IDS,
    Committed,
    IdempotencyTaken,
    OutboxRow,
    QuotaReached,
)
from tests.contract.builders import (
    FORM_ID,
    WORKSPACE_ID,
    event_for,
    form,
    plan,
    quota,
    record,
    seed,
    stored,
    submission,
    upload_policy,
    workspace,
)
from tests.contract.conftest import Backend
from tests.contract.old_schemas import (
    from_on,
    postgres_before,
    postgres_from_on,
    postgres_workspace,
    sqlite_before,
    sqlite_workspace,
)
from tests.contract.test_postgres import empty_url  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio

# A database of the version before uploads, migrated forward.
SQLITE_NAME = "0004_uploads"
PG_NAME = "0006_uploads"


async def contexts(store: Store) -> tuple[FormContext | None, FormContext | None]:
    return (
        await store.forms.resolve_public_key(form().public_form_key),
        await store.forms.resolve_id(FORM_ID),
    )


# Forms


async def test_a_form_with_an_upload_policy_reads_back_everywhere(store: Store) -> None:
    await store.workspaces.add(workspace())
    uploading = evolve(form(), uploads=upload_policy())

    await store.forms.add(uploading)

    assert await store.forms.get(FORM_ID) == uploading
    assert await store.forms.list() == [uploading]
    assert await store.forms.list(WORKSPACE_ID) == [uploading]
    expected = FormContext(uploading, workspace())
    assert await contexts(store) == (expected, expected)


async def test_a_form_without_a_policy_reads_back_with_uploads_off(store: Store) -> None:
    await seed(store)

    found = await store.forms.get(FORM_ID)

    assert found is not None
    assert found.uploads is None


async def test_an_update_changes_the_policy_then_turns_uploads_off(store: Store) -> None:
    await store.workspaces.add(workspace())
    await store.forms.add(evolve(form(), uploads=upload_policy()))
    # Read once, so that a store keeping lookups must forget them on the update.
    await contexts(store)

    defaults = evolve(form(), uploads=UploadPolicy())
    await store.forms.update(defaults)

    assert await store.forms.get(FORM_ID) == defaults
    assert await contexts(store) == (FormContext(defaults, workspace()),) * 2

    await store.forms.update(form())

    assert await store.forms.get(FORM_ID) == form()
    assert await store.forms.list() == [form()]
    assert await contexts(store) == (FormContext(form(), workspace()),) * 2


async def test_turning_uploads_on_for_an_existing_form_reads_back(store: Store) -> None:
    await seed(store)
    uploading = evolve(form(), uploads=upload_policy())

    await store.forms.update(uploading)

    assert await store.forms.get(FORM_ID) == uploading
    assert await contexts(store) == (FormContext(uploading, workspace()),) * 2


# Submissions


async def test_a_submission_with_files_reads_back_through_get_and_iterate(store: Store) -> None:
    await seed(store)
    one = submission(1, files=1)
    three = submission(2, files=3, status=SubmissionStatus.SPAM)
    none = submission(3)

    for sub in (one, three, none):
        assert await store.submissions.commit(plan(sub)) == Committed()

    assert three.files[2].field == "photo"
    for sub in (one, three, none):
        assert await store.submissions.get(sub.submission_id) == sub
    assert await stored(store) == [one, three, none]
    spam = [
        s
        async for s in store.submissions.iterate(
            FORM_ID, SubmissionFilter(frozenset({SubmissionStatus.SPAM}))
        )
    ]
    assert spam == [three]
    small = [s async for s in store.submissions.iterate(FORM_ID, batch_size=1)]
    assert small == [one, three, none]


async def test_a_submission_without_files_reads_back_with_none(store: Store) -> None:
    await seed(store)
    sub = submission(1)

    await store.submissions.commit(plan(sub))

    found = await store.submissions.get(sub.submission_id)
    assert found is not None
    assert found.files == ()
    assert [s.files for s in await stored(store)] == [()]


async def test_the_event_of_a_submission_with_files_tells_of_them(store: Store) -> None:
    await seed(store)
    sub = submission(1, files=2)

    await store.submissions.commit(plan(sub))

    rows = await store.submissions.outbox()
    assert rows == [OutboxRow(event_for(sub))]
    described = rows[0].event.payload["files"]
    assert isinstance(described, list)
    assert [entry["name"] for entry in described] == [f.name for f in sub.files]


async def test_a_commit_refused_for_the_quota_stores_no_files(store: Store) -> None:
    await seed(store)
    await store.submissions.commit(plan(submission(1, files=1), charge=quota(1)))
    over = submission(2, files=2)

    assert await store.submissions.commit(plan(over, charge=quota(1))) == QuotaReached()

    assert await store.submissions.get(over.submission_id) is None
    assert await store.submissions.existing([over.submission_id]) == set()
    assert await stored(store) == [submission(1, files=1)]


async def test_a_commit_that_lost_its_key_stores_no_files(store: Store) -> None:
    await seed(store)
    first = submission(1, files=1)
    second = submission(2, files=3)
    await store.submissions.commit(plan(first, idempotency=record(first)))

    result = await store.submissions.commit(plan(second, idempotency=record(second)))

    assert result == IdempotencyTaken(record(first))
    assert await store.submissions.get(second.submission_id) is None
    assert await store.submissions.existing([first.submission_id, second.submission_id]) == {
        first.submission_id
    }
    assert await stored(store) == [first]


async def test_a_commit_that_fails_midway_stores_no_files(store: Store, backend: Backend) -> None:
    # The outbox insert fails after the submission row (with its files) is written.
    await seed(store)
    sub = submission(1, files=2)

    async with backend.failing_commits():
        with pytest.raises(StorageUnavailable):
            await store.submissions.commit(plan(sub, charge=quota(5)))

    assert await store.submissions.get(sub.submission_id) is None
    assert await store.submissions.existing([sub.submission_id]) == set()
    assert await store.submissions.commit(plan(sub, charge=quota(5))) == Committed()
    assert await store.submissions.get(sub.submission_id) == sub


# existing


async def test_existing_answers_exactly_the_stored_ids(store: Store) -> None:
    await seed(store)
    subs = [submission(n, files=n % 2) for n in range(1, 5)]
    for sub in subs:
        await store.submissions.commit(plan(sub))
    unknown = [submission(n).submission_id for n in (7, 8)]
    asked = [subs[0].submission_id, subs[2].submission_id, *unknown, subs[0].submission_id]

    assert await store.submissions.existing(asked) == {
        subs[0].submission_id,
        subs[2].submission_id,
    }
    assert await store.submissions.existing(unknown) == set()
    assert await store.submissions.existing({s.submission_id for s in subs}) == {
        s.submission_id for s in subs
    }
    # Not a prefix, nor another case: ids are compared exactly.
    first = subs[0].submission_id
    assert await store.submissions.existing([first[:-1], first.upper(), first + "x"]) == set()


async def test_existing_of_nothing_is_nothing(store: Store) -> None:
    assert await store.submissions.existing([]) == set()
    assert await store.submissions.existing(set()) == set()


async def test_existing_takes_up_to_its_limit_of_ids_per_call(store: Store) -> None:
    await seed(store)
    sub = submission(1)
    await store.submissions.commit(plan(sub))
    many = [submission(n).submission_id for n in range(2, MAX_EXISTING_IDS + 1)]
    assert len({sub.submission_id, *many}) == MAX_EXISTING_IDS

    assert await store.submissions.existing([sub.submission_id, *many]) == {sub.submission_id}
    with pytest.raises(ValueError, match=str(MAX_EXISTING_IDS)):
        await store.submissions.existing(
            [sub.submission_id, *many, submission(5_000).submission_id]
        )


# A database of the previous version, migrated: its rows stay, with no files and uploads off


def _previous_sqlite_file(path: Path) -> None:
    """A file as the previous version left it: its migrations, and a row of each kind
    the new ones change."""
    sub = submission(1)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        sqlite_before(conn, SQLITE_NAME)
        sqlite_workspace(conn, WORKSPACE_ID)
        conn.execute(
            "INSERT INTO forms (form_id, workspace_id, public_form_key, name, mode, enabled,"
            " allowed_origins, rules, spam_threshold)"
            " VALUES (?, ?, 'pk-old', 'Old', 'public', 1, '[]', '[]', 5.0)",
            (FORM_ID, WORKSPACE_ID),
        )
        conn.execute(
            "INSERT INTO submissions (submission_id, form_id, workspace_id, status, data,"
            " spam_score, created_at) VALUES (?, ?, ?, 'accepted', '{\"a\":\"b\"}', 0.0,"
            " '2026-01-15T12:00:00.000000Z')",
            (sub.submission_id, FORM_ID, WORKSPACE_ID),
        )


async def test_a_sqlite_file_of_the_previous_version_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _previous_sqlite_file(path)
    old = submission(1)

    store = await open_sqlite_store(f"sqlite:///{path}")
    try:
        assert await store.migrate() == from_on(SQLITE_MIGRATIONS, SQLITE_NAME)
        found = await store.submissions.get(old.submission_id)
        assert found is not None
        assert found.files == ()
        assert found.data == {"a": "b"}
        assert found.created_at == datetime(2026, 1, 15, 12, tzinfo=UTC)
        context = await store.forms.resolve_public_key("pk-old")
        assert context is not None
        assert context.form.uploads is None
        assert await store.submissions.existing([old.submission_id]) == {old.submission_id}

        # And the new columns take new rows beside the old ones.
        new = submission(2, files=2)
        assert await store.submissions.commit(plan(new)) == Committed()
        assert [s.files for s in await stored(store)] == [(), new.files]
        await store.forms.update(evolve(context.form, uploads=upload_policy()))
        changed = await store.forms.get(FORM_ID)
        assert changed is not None
        assert changed.uploads == upload_policy()
    finally:
        await store.close()


@pytest.mark.services
async def test_a_postgres_database_of_the_previous_version_keeps_its_rows(
    empty_url: str,  # noqa: F811
) -> None:
    old = submission(1, files=0)
    async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
        await postgres_before(conn, PG_NAME)
        await postgres_workspace(conn, WORKSPACE_ID)
        await conn.execute(
            "INSERT INTO forms (form_id, workspace_id, public_form_key, name, mode, enabled,"
            " allowed_origins, rules, spam_threshold)"
            " VALUES (%s, %s, 'pk-old', 'Old', 'public', true, '[]', '[]', 5.0)",
            (FORM_ID, WORKSPACE_ID),
        )
        await conn.execute(
            "INSERT INTO submissions (submission_id, form_id, workspace_id, status, data,"
            " spam_score, created_at)"
            " VALUES (%s, %s, %s, 'accepted', '{\"a\":\"b\"}', 0.0, %s)",
            (old.submission_id, FORM_ID, WORKSPACE_ID, old.created_at),
        )
    store = await open_postgres_store(empty_url)
    try:
        assert await store.migrate() == postgres_from_on(PG_NAME)
        await store.ping()
        found = await store.submissions.get(old.submission_id)
        assert found is not None
        assert found.files == ()
        assert found.data == {"a": "b"}
        context = await store.forms.resolve_public_key("pk-old")
        assert context is not None
        assert context.form.uploads is None
        assert await store.submissions.existing([old.submission_id]) == {old.submission_id}

        new = submission(2, files=2)
        assert await store.submissions.commit(plan(new)) == Committed()
        assert [s.files for s in await stored(store)] == [(), new.files]
    finally:
        await store.close()


@pytest.mark.services
async def test_a_postgres_commit_of_the_previous_version_still_commits(
    empty_url: str,  # noqa: F811
) -> None:
    # During a rolling deployment, a server of the previous version calls the function
    # without p_files (nor the later arguments): its submission is stored with none.
    later = ("p_files", "p_storage", "p_spam_reasons", "p_search_text")
    previous_call = "\n".join(
        line for line in pg._COMMIT.splitlines() if not any(name in line for name in later)
    ).replace("%(quota_exact)s::boolean,", "%(quota_exact)s::boolean")
    assert previous_call != pg._COMMIT
    store = await open_postgres_store(empty_url)
    try:
        await store.migrate()
        await seed(store)
        sub = submission(1)
        params = commit_params(plan(sub))
        del params["files"]
        async with await psycopg.AsyncConnection.connect(empty_url, autocommit=True) as conn:
            cursor = await conn.execute(previous_call, params)
            row = await cursor.fetchone()

        assert row is not None
        assert row[0] == "committed"
        assert await store.submissions.get(sub.submission_id) == sub
    finally:
        await store.close()
