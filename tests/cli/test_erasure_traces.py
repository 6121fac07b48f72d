"""What an erasure leaves in the SQLite files: nothing. After `intake erase`, and after
`intake purge` erases what is past a form's retention, no byte of the erased values is
in the database file, its write-ahead log (`-wal`) or its index (`-shm`), read raw, while
a server still holds the database open (its connection keeps the log from being removed
when the command closes its own). The autoresponder's record of the address goes too."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from attrs import evolve
from starlette.testclient import TestClient

from intake.adapters.sqlite import open_sqlite_store
from intake.adapters.sqlite.connection import connect
from tests.cli.conftest import Cli, submit
from tests.contract.builders import FORM_ID, plan, seed, submission

ADA = "ada.lovelace.erased@example.com"
MESSAGE = "a-message-only-ada-wrote-7f3a9c"
KEPT = "a-message-bob-wrote-that-stays-4e21"


def _files(database_url: str) -> dict[str, bytes]:
    """The database's files as they are on disk, byte for byte."""
    path = Path(database_url.removeprefix("sqlite:///"))
    found = {}
    for suffix in ("", "-wal", "-shm"):
        file = path.with_name(path.name + suffix)
        found[file.name] = file.read_bytes() if file.exists() else b""
    return found


def _holding(files: dict[str, bytes], value: str) -> list[str]:
    return [name for name, content in files.items() if value.encode() in content]


def _autoresponse_records(database_url: str) -> int:
    with closing(sqlite3.connect(database_url.removeprefix("sqlite:///"))) as conn:
        (count,) = conn.execute("SELECT count(*) FROM autoresponses").fetchone()
    return int(count)


def test_intake_erase_leaves_no_byte_of_what_it_erased_in_the_files(
    cli: Cli, http: TestClient, database_url: str
) -> None:
    workspace = cli.json("workspace", "create", "--name", "Acme")
    form = cli.json(
        "form", "create", "--workspace", str(workspace["workspace_id"]), "--autoresponse", "on"
    )
    key = str(form["public_form_key"])
    submit(http, key, {"email": ADA, "message": MESSAGE})
    submit(http, key, {"email": "bob@example.com", "message": KEPT})
    assert cli("relay", "--once").code == 0  # fanned out: ada's confirmation is recorded
    assert _autoresponse_records(database_url) == 2
    assert _holding(_files(database_url), MESSAGE) != []  # the test sees what it seeks

    erased = cli.json("erase", "--workspace", str(workspace["workspace_id"]), "--email", ADA)

    assert erased["count"] == 1
    files = _files(database_url)
    assert _holding(files, MESSAGE) == []
    assert _holding(files, ADA) == []
    assert _holding(files, KEPT) != []
    assert _autoresponse_records(database_url) == 1  # bob's
    # The server goes on serving from the same files.
    submit(http, key, {"message": "after the erasure"})


async def _old_submission(url: str, now: datetime) -> None:
    """One submission of frm_1, 40 days old, its event published."""
    store = await open_sqlite_store(url)
    try:
        await seed(store)
        old = evolve(
            submission(1, created_at=now - timedelta(days=40)),
            data={"email": ADA, "message": MESSAGE},
            reply_to=ADA,
        )
        await store.submissions.commit(plan(old))
        while await store.deliveries.fan_out(now, 100):
            pass
    finally:
        await store.close()


def test_a_retention_purge_leaves_no_byte_of_what_it_erased_in_the_files(
    cli: Cli, http: TestClient, database_url: str
) -> None:
    asyncio.run(_old_submission(database_url, datetime.now(UTC)))
    cli.json("form", "update", FORM_ID, "--retention-days", "30")
    assert _holding(_files(database_url), MESSAGE) != []

    purged = cli.json("purge")

    assert purged["expired_submissions"] == 1
    files = _files(database_url)
    assert _holding(files, MESSAGE) == []
    assert _holding(files, ADA) == []


def test_the_store_overwrites_what_it_deletes(tmp_path: Path) -> None:
    with closing(connect(str(tmp_path / "intake.db"))) as conn:
        (secure_delete,) = conn.execute("PRAGMA secure_delete").fetchone()

    assert secure_delete == 1
