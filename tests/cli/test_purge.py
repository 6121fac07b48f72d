"""`intake purge` on a SQLite file: what it deletes, and how it says so."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from attrs import evolve

from intake.adapters.blobs import LocalBlobStore
from intake.adapters.sqlite import open_sqlite_store
from intake.adapters.sqlite.connection import database_path
from intake.adapters.sqlite.mapping import time_text
from intake.config import default_blob_url
from intake.domain.idempotency import RETENTION, IdempotencyRecord
from intake.domain.model import Submission, SubmissionStatus
from intake.domain.users import Invitation, InvitationStatus, Membership, Role, User
from tests.cli.conftest import Cli
from tests.contract.builders import event_for, plan, seed, submission

DAY = timedelta(days=1)
# A SQLite file has its blob folder beside it, so every purge here sweeps it as well
# (what the sweep deletes: tests/cli/test_uploads_cli.py).
NOTHING_SWEPT = {
    "flagged_submissions": 0,
    "flagged_files": 0,
    "expired_submissions": 0,
    "expired_files": 0,
    "truncated_client_ips": 0,
    "autoresponse_records": 0,
    "invitations": 0,
    "spam_settled": 0,
    "orphan_files": 0,
    "incomplete_uploads": 0,
}
SWEPT_NOTHING_LINES = [
    "deleted 0 autoresponder records older than two hours",
    "erased 0 spam or unverified submissions older than 30 days, and 0 files",
    "erased 0 submissions past their form's retention, and 0 files",
    "cut 0 full client addresses older than 24 hours to their networks",
    "deleted 0 dashboard invitations expired more than 30 days ago",
    "taught the spam filter 0 untouched submissions",
    "deleted 0 orphaned uploaded files older than 1 hour",
    "deleted 0 incomplete uploads older than 1 hour",
]


async def _fill(url: str, now: datetime) -> None:
    """Keys: two expired, one live. Outbox rows: two published 10 days ago, one a day
    ago, and one never published, ten years old."""
    store = await open_sqlite_store(url)
    try:
        await seed(store)
        for key, age in (("old-1", RETENTION), ("old-2", 3 * DAY), ("live", DAY / 2)):
            record = IdempotencyRecord("public:frm_1", key, "f" * 64, f"sub_{key}", now - age)
            assert await store.submissions.claim_key(record) is None
        published = {1: now - 10 * DAY, 2: now - 10 * DAY, 3: now - DAY}
        for n in (*published, 4):
            # Their client addresses as the default keeps them: none left to cut.
            old = submission(n, created_at=now - 3650 * DAY)
            await store.submissions.commit(plan(evolve(old, client_ip="203.0.113.0")))
    finally:
        await store.close()
    # As the relay will: published rows are marked so, in the database itself.
    with closing(sqlite3.connect(database_path(url))) as conn, conn:
        for n, when in published.items():
            event_id = event_for(submission(n, created_at=now - 3650 * DAY)).event_id
            conn.execute(
                "UPDATE outbox SET published_at = ? WHERE event_id = ?",
                (time_text(when), event_id),
            )


@pytest.fixture
def filled(database_url: str) -> None:
    # The command reads the system clock: the rows are aged against it, by days, so the
    # seconds the test takes change nothing.
    asyncio.run(_fill(database_url, datetime.now(UTC)))


def _outbox_left(database_url: str) -> int:
    with closing(sqlite3.connect(database_path(database_url))) as conn:
        (count,) = conn.execute("SELECT count(*) FROM outbox").fetchone()
    assert isinstance(count, int)
    return count


@pytest.mark.usefixtures("filled")
def test_purge_prints_what_it_deleted_as_json(cli: Cli, database_url: str) -> None:
    # Its four accepted submissions, untouched for years, teach the spam filter once.
    first = cli.json("purge")
    assert first == {**NOTHING_SWEPT, "idempotency": 2, "outbox": 2, "spam_settled": 4}
    assert _outbox_left(database_url) == 2  # the recent one and the unpublished one

    assert cli.json("purge") == {**NOTHING_SWEPT, "idempotency": 0, "outbox": 0}


@pytest.mark.usefixtures("filled")
def test_purge_prints_what_it_deleted_for_people(cli: Cli) -> None:
    result = cli("purge")

    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "deleted 2 expired idempotency keys",
        "deleted 2 outbox rows published more than 7 days ago",
        *(
            "taught the spam filter 4 untouched submissions" if "spam filter" in line else line
            for line in SWEPT_NOTHING_LINES
        ),
    ]
    assert result.err == ""


def test_purge_of_an_empty_database_deletes_nothing(cli: Cli) -> None:
    result = cli("purge")

    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        "deleted 0 expired idempotency keys",
        "deleted 0 outbox rows published more than 7 days ago",
        *SWEPT_NOTHING_LINES,
    ]
    assert cli.json("purge") == {**NOTHING_SWEPT, "idempotency": 0, "outbox": 0}


@pytest.mark.usefixtures("filled")
def test_the_retention_flag_replaces_the_default(cli: Cli, database_url: str) -> None:
    assert cli.json("purge", "--outbox-retention-days", "0") == {
        **NOTHING_SWEPT,
        "idempotency": 2,
        "outbox": 3,
        "spam_settled": 4,
    }
    # Published or not: the row still to deliver stays.
    assert _outbox_left(database_url) == 1


@pytest.mark.usefixtures("filled")
def test_the_retention_comes_from_the_environment(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_OUTBOX_RETENTION_DAYS", "30")
    monkeypatch.setenv("INTAKE_SPAM_SETTLE_DAYS", "0")  # untouched submissions teach nothing
    assert cli.json("purge") == {**NOTHING_SWEPT, "idempotency": 2, "outbox": 0}

    result = cli("purge", "--outbox-retention-days", "1")
    assert result.out.splitlines()[1] == "deleted 3 outbox rows published more than 1 day ago"


@pytest.mark.parametrize("days", ["-1", "seven", "1.5"])
def test_a_bad_retention_flag_is_a_usage_error(cli: Cli, days: str) -> None:
    result = cli("purge", "--outbox-retention-days", days, "--json")

    assert result.code == 2
    assert "--outbox-retention-days" in result.err
    assert result.document["ok"] is False


def test_a_bad_retention_variable_is_refused(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTAKE_OUTBOX_RETENTION_DAYS", "-1")

    result = cli("purge")

    assert result.code == 1
    assert "INTAKE_OUTBOX_RETENTION_DAYS" in result.err


# Spam retention: spam and unverified submissions older than it go, with their files


async def _flagged(url: str, now: datetime) -> list[Submission]:
    """Spam 40 days old with two files, unverified 20 days old with one, and accepted
    400 days old with one: all published, their blobs in the store beside the file."""
    store = await open_sqlite_store(url)
    blobs = LocalBlobStore(Path(str(default_blob_url(url))))
    made = [
        submission(1, status=SubmissionStatus.SPAM, files=2, created_at=now - 40 * DAY),
        submission(2, status=SubmissionStatus.UNVERIFIED, files=1, created_at=now - 20 * DAY),
        submission(3, files=1, created_at=now - 400 * DAY),
    ]
    try:
        await seed(store)
        for sub in made:
            await store.submissions.commit(plan(sub))
            for stored in sub.files:
                async with await blobs.writer(
                    stored.key, content_type="text/plain", max_size=10
                ) as writer:
                    await writer.write(b"a file")
                    await writer.commit()
        await store.deliveries.fan_out(now, 100)
    finally:
        await store.close()
        await blobs.aclose()
    return made


def _blob_keys(url: str) -> set[str]:
    async def collect() -> set[str]:
        blobs = LocalBlobStore(Path(str(default_blob_url(url))))
        try:
            return {info.key async for info in blobs.list()}
        finally:
            await blobs.aclose()

    return asyncio.run(collect())


def _kept(url: str) -> list[SubmissionStatus]:
    with closing(sqlite3.connect(database_path(url))) as conn:
        rows = conn.execute("SELECT status FROM submissions ORDER BY submission_id").fetchall()
    return [SubmissionStatus(status) for (status,) in rows]


@pytest.fixture
def flagged(database_url: str) -> list[Submission]:
    return asyncio.run(_flagged(database_url, datetime.now(UTC)))


def test_purge_erases_spam_past_its_retention_with_its_files(
    cli: Cli, database_url: str, flagged: list[Submission]
) -> None:
    _spam, unverified, accepted = flagged

    document = cli.json("purge")

    assert document["flagged_submissions"] == 1
    assert document["flagged_files"] == 2
    assert document["orphan_files"] == 0  # deleted by the erase, not left to the sweep
    assert _kept(database_url) == [SubmissionStatus.UNVERIFIED, SubmissionStatus.ACCEPTED]
    assert _blob_keys(database_url) == {f.key for f in (*unverified.files, *accepted.files)}
    assert cli.json("purge")["flagged_submissions"] == 0


def test_the_spam_retention_flag_and_variable_replace_the_default(
    cli: Cli, database_url: str, flagged: list[Submission], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_SPAM_RETENTION_DAYS", "50")
    assert cli.json("purge")["flagged_submissions"] == 0

    result = cli("purge", "--spam-retention-days", "10")

    assert result.code == 0, result.err
    assert result.out.splitlines()[3] == (
        "erased 2 spam or unverified submissions older than 10 days, and 3 files"
    )
    assert _kept(database_url) == [SubmissionStatus.ACCEPTED]


def test_a_spam_retention_of_zero_keeps_them_forever(
    cli: Cli, database_url: str, flagged: list[Submission]
) -> None:
    result = cli("purge", "--spam-retention-days", "0")

    assert result.code == 0, result.err
    assert result.out.splitlines()[3] == (
        "kept every spam and unverified submission (spam retention 0: forever)"
    )
    assert len(_kept(database_url)) == 3


@pytest.mark.parametrize("days", ["-1", "thirty"])
def test_a_bad_spam_retention_flag_is_a_usage_error(cli: Cli, days: str) -> None:
    result = cli("purge", "--spam-retention-days", days, "--json")

    assert result.code == 2
    assert "--spam-retention-days" in result.err


async def _two_full_addresses(url: str, now: datetime) -> None:
    """Submissions kept with their full client address: two days old, and two hours."""
    store = await open_sqlite_store(url)
    try:
        await seed(store)
        for n, age in ((1, 2 * DAY), (2, timedelta(hours=2))):
            full = evolve(submission(n, created_at=now - age), client_ip=f"198.51.100.{n}")
            await store.submissions.commit(plan(full))
    finally:
        await store.close()


def _client_ips(database_url: str) -> list[str]:
    with closing(sqlite3.connect(database_path(database_url))) as conn:
        rows = conn.execute("SELECT client_ip FROM submissions ORDER BY submission_id")
        return [ip for (ip,) in rows.fetchall()]


def test_purge_cuts_full_client_addresses_past_their_hours(
    cli: Cli, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.run(_two_full_addresses(database_url, datetime.now(UTC)))

    assert cli.json("purge")["truncated_client_ips"] == 1
    assert _client_ips(database_url) == ["198.51.100.0", "198.51.100.2"]
    assert cli.json("purge")["truncated_client_ips"] == 0

    monkeypatch.setenv("INTAKE_CLIENT_IP_FULL_HOURS", "1")
    said = cli("purge").out.splitlines()
    assert "cut 1 full client address older than 1 hour to its network" in said
    assert _client_ips(database_url) == ["198.51.100.0", "198.51.100.0"]


@pytest.mark.parametrize("hours", ["0", "-1", "a day"])
def test_a_bad_client_ip_hours_variable_is_refused(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, hours: str
) -> None:
    monkeypatch.setenv("INTAKE_CLIENT_IP_FULL_HOURS", hours)

    result = cli("purge")

    assert result.code == 1
    assert "INTAKE_CLIENT_IP_FULL_HOURS" in result.err


async def _invitations(url: str, now: datetime) -> None:
    """Two invitations of ws_1: one expired 31 days ago (accepted), one 29 days ago."""
    store = await open_sqlite_store(url)
    try:
        await seed(store)
        owner = User(user_id="usr_1", email="owner@example.com", created_at=now)
        await store.users.add(owner, Membership("usr_1", "ws_1", Role.OWNER, now))
        for n, days in ((1, 31), (2, 29)):
            expired = now - timedelta(days=days)
            await store.users.put_invitation(
                Invitation(
                    invitation_id=f"inv_{n}",
                    workspace_id="ws_1",
                    email=f"guest{n}@example.com",
                    role=Role.MEMBER,
                    invited_by="usr_1",
                    token_hash=bytes([n]) * 32,
                    created_at=expired - timedelta(days=7),
                    expires_at=expired,
                    status=InvitationStatus.ACCEPTED if n == 1 else InvitationStatus.PENDING,
                )
            )
    finally:
        await store.close()


def test_purge_deletes_invitations_a_month_past_their_expiry(cli: Cli, database_url: str) -> None:
    asyncio.run(_invitations(database_url, datetime.now(UTC)))

    first = cli.json("purge")
    again = cli("purge").out.splitlines()

    assert first["invitations"] == 1
    assert "deleted 0 dashboard invitations expired more than 30 days ago" in again
    with closing(sqlite3.connect(database_path(database_url))) as conn:
        left = [row[0] for row in conn.execute("SELECT email FROM invitations")]
    assert left == ["guest2@example.com"]
