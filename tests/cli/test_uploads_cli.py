"""The command line and file uploads: a form's upload policy, submissions' files in the
listing and the exports (`--files DIR`), and the sweep `intake purge` runs.

Submissions with files are committed straight through the SQLite store, their blobs
written into the local store beside the database, where the commands find them.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import os
import secrets
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from attrs import frozen
from starlette.testclient import TestClient

from intake.adapters.blobs import LocalBlobStore
from intake.adapters.memory import FakeClock
from intake.adapters.sqlite import open_sqlite_store
from intake.config import default_blob_url
from intake.domain import ids
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.signing import DownloadSigner
from intake.domain.uploads import (
    DEFAULT_ALLOWED_TYPES,
    DEFAULT_MAX_FILE_SIZE,
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_TOTAL_SIZE,
    StoredFile,
    file_key,
)
from intake.ports.blobs import INCOMING_PREFIX
from intake.ports.submissions import CommitPlan
from tests.cli.conftest import Cli

MIB = 1024 * 1024
DEFAULTS = {
    "allowed_types": list(DEFAULT_ALLOWED_TYPES),
    "max_file_size": DEFAULT_MAX_FILE_SIZE,
    "max_total_size": DEFAULT_MAX_TOTAL_SIZE,
    "max_files": DEFAULT_MAX_FILES,
}
SECRET = "a download secret of more than thirty-two bytes"
BASE_URL = "https://forms.example.com"


@pytest.fixture
def workspace_id(cli: Cli) -> str:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    assert isinstance(workspace_id, str)
    return workspace_id


def _create(cli: Cli, workspace_id: str, *options: str) -> dict[str, Any]:
    return cli.json("form", "create", "--workspace", workspace_id, *options)


# -- the policy flags ---------------------------------------------------------------------


def test_a_form_takes_no_files_unless_told(cli: Cli, workspace_id: str) -> None:
    form = _create(cli, workspace_id)

    assert form["uploads"] is None
    assert cli.json("form", "show", form["form_id"])["uploads"] is None
    assert "uploads=-" in cli("form", "show", form["form_id"]).out.splitlines()
    assert cli.json("form", "list")["forms"][0]["uploads"] is None


def test_uploads_turns_them_on_with_the_defaults(cli: Cli, workspace_id: str) -> None:
    form = _create(cli, workspace_id, "--uploads")

    assert form["uploads"] == DEFAULTS
    assert cli.json("form", "show", form["form_id"])["uploads"] == DEFAULTS
    assert cli.json("form", "list")["forms"][0]["uploads"] == DEFAULTS
    shown = cli("form", "show", form["form_id"]).out.splitlines()
    assert f"uploads={json.dumps(DEFAULTS, separators=(',', ':'))}" in shown


def test_each_value_flag_turns_uploads_on_and_the_rest_keep_their_defaults(
    cli: Cli, workspace_id: str
) -> None:
    assert _create(cli, workspace_id, "--upload-type", " Image/* ", "--upload-type", "text/csv")[
        "uploads"
    ] == {**DEFAULTS, "allowed_types": ["image/*", "text/csv"]}
    assert _create(cli, workspace_id, "--max-file-size", "10MiB")["uploads"] == {
        **DEFAULTS,
        "max_file_size": 10 * MIB,
    }
    assert _create(cli, workspace_id, "--max-upload-total", "20971520")["uploads"] == {
        **DEFAULTS,
        "max_total_size": 20 * MIB,
    }
    assert _create(cli, workspace_id, "--max-files", "3")["uploads"] == {
        **DEFAULTS,
        "max_files": 3,
    }


@pytest.mark.parametrize(
    ("given", "size"),
    [
        ("1", 1),
        ("4096", 4096),
        ("512KiB", 512 * 1024),
        ("512 kib", 512 * 1024),
        ("3MiB", 3 * MIB),
        ("1GiB", 1024 * MIB),
        ("100B", 100),
    ],
)
def test_sizes_take_binary_units(cli: Cli, workspace_id: str, given: str, size: int) -> None:
    policy = _create(cli, workspace_id, "--max-file-size", given, "--max-upload-total", given)[
        "uploads"
    ]

    assert (policy["max_file_size"], policy["max_total_size"]) == (size, size)


def test_create_takes_the_whole_policy_at_once(cli: Cli, workspace_id: str) -> None:
    result = cli(
        "form", "create", "--workspace", workspace_id, "--upload-type", "application/pdf",
        "--upload-type", "application/pdf", "--max-file-size", "5MiB",
        "--max-upload-total", "20MiB", "--max-files", "3", "--json",
    )  # fmt: skip

    assert result.code == 0, result.err
    assert result.document["uploads"] == {
        "allowed_types": ["application/pdf"],  # once, however often given
        "max_file_size": 5 * MIB,
        "max_total_size": 20 * MIB,
        "max_files": 3,
    }
    assert result.err == ""


def test_update_changes_one_value_and_keeps_the_others(cli: Cli, workspace_id: str) -> None:
    form_id = _create(
        cli, workspace_id, "--upload-type", "application/pdf", "--max-files", "3",
        "--max-file-size", "5MiB",
    )["form_id"]  # fmt: skip
    expected = {
        "allowed_types": ["application/pdf"],
        "max_file_size": 5 * MIB,
        "max_total_size": DEFAULT_MAX_TOTAL_SIZE,
        "max_files": 3,
    }

    expected["max_files"] = 4
    assert cli.json("form", "update", form_id, "--max-files", "4")["uploads"] == expected
    expected["max_total_size"] = 30 * MIB
    assert cli.json("form", "update", form_id, "--max-upload-total", "30MiB")["uploads"] == (
        expected
    )
    # The list is replaced, not added to.
    expected["allowed_types"] = ["image/png", "image/jpeg"]
    doc = cli.json(
        "form", "update", form_id, "--upload-type", "image/png", "--upload-type", "image/jpeg"
    )
    assert doc["uploads"] == expected
    # --uploads on a form that takes files already changes nothing; other flags neither.
    assert cli.json("form", "update", form_id, "--uploads")["uploads"] == expected
    assert cli.json("form", "update", form_id, "--name", "Renamed")["uploads"] == expected
    assert cli.json("form", "pause", form_id)["uploads"] == expected
    assert cli.json("form", "rotate-key", form_id)["uploads"] == expected
    assert cli.json("form", "show", form_id)["uploads"] == expected


def test_update_turns_uploads_off_and_on_again(cli: Cli, workspace_id: str) -> None:
    form_id = _create(cli, workspace_id, "--max-files", "2")["form_id"]

    assert cli.json("form", "update", form_id, "--no-uploads")["uploads"] is None
    assert cli.json("form", "show", form_id)["uploads"] is None
    # Off, then on with one value: the defaults for the rest, not the old values.
    doc = cli.json("form", "update", form_id, "--max-file-size", "1MiB")
    assert doc["uploads"] == {**DEFAULTS, "max_file_size": MIB}
    cli.json("form", "update", form_id, "--no-uploads")
    assert cli.json("form", "update", form_id, "--uploads")["uploads"] == DEFAULTS


def test_a_file_limit_above_the_total_is_kept_with_a_note(cli: Cli, workspace_id: str) -> None:
    result = cli(
        "form", "create", "--workspace", workspace_id, "--max-file-size", "50MiB", "--json"
    )

    assert result.code == 0, result.err
    assert result.document["uploads"]["max_file_size"] == 50 * MIB
    assert "max_file_size" in result.err
    assert str(DEFAULT_MAX_TOTAL_SIZE) in result.err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--upload-type", "pdf"], "not a MIME type or pattern: 'pdf'"),
        (["--upload-type", "text/html; charset=utf-8"], "not a MIME type"),
        (["--upload-type", "*/png"], "not a MIME type"),
        (["--upload-type", ""], "not a MIME type"),
        (["--max-file-size", "0"], "max_file_size must be 1 to"),
        (["--max-file-size", "2GiB"], "max_file_size must be 1 to 1073741824 bytes"),
        (["--max-upload-total", "0KiB"], "max_total_size must be 1 to"),
        (["--max-files", "0"], "max_files must be 1 to 100"),
        (["--max-files", "101"], "max_files must be 1 to 100"),
        (["--max-files", "-3"], "max_files must be 1 to 100"),
        (["--no-uploads", "--max-files", "3"], "--no-uploads cannot go with --max-files"),
        (
            ["--no-uploads", "--upload-type", "image/*", "--max-file-size", "1"],
            "--no-uploads cannot go with --upload-type, --max-file-size",
        ),
    ],
)
def test_bad_policy_values_are_refused_with_exit_1(
    cli: Cli, workspace_id: str, options: list[str], message: str
) -> None:
    result = cli("form", "create", "--workspace", workspace_id, *options, "--json")

    assert result.code == 1
    assert message in result.document["error"]
    assert message in result.err
    assert cli.json("form", "list")["forms"] == []


@pytest.mark.parametrize(
    "options",
    [
        ["--max-file-size", "10MB"],  # decimal units are ambiguous: KiB, MiB, GiB only
        ["--max-file-size", "ten"],
        ["--max-file-size", "1.5MiB"],
        ["--max-upload-total", "-1"],
        ["--max-files", "many"],
        ["--max-files", "2.5"],
        ["--upload-type"],
        ["--uploads", "--no-uploads"],
    ],
)
def test_unreadable_policy_flags_are_usage_errors(
    cli: Cli, workspace_id: str, options: list[str]
) -> None:
    for command in (["form", "create", "--workspace", workspace_id], ["form", "update", "frm_x"]):
        result = cli(*command, *options, "--json")

        assert result.code == 2, (command, options)
        assert result.document["ok"] is False


def test_update_refuses_bad_values_and_keeps_the_policy(cli: Cli, workspace_id: str) -> None:
    form_id = _create(cli, workspace_id, "--uploads")["form_id"]

    assert cli("form", "update", form_id, "--upload-type", "nonsense").code == 1
    assert cli("form", "update", form_id, "--max-files", "1000").code == 1
    assert cli("form", "update", form_id, "--no-uploads", "--max-files", "1").code == 1
    assert cli("form", "update", "frm_nope", "--uploads").code == 1
    assert cli.json("form", "show", form_id)["uploads"] == DEFAULTS


# -- submissions with files ---------------------------------------------------------------

NOW = datetime.now(UTC)


@frozen
class Upload:
    field: str
    name: str
    content: bytes
    content_type: str = "text/plain"


def _submission_id(n: int, at: datetime) -> str:
    return ids.submission_id(int(at.timestamp() * 1000), n.to_bytes(12, "big"))


async def _commit(
    database_url: str,
    form: dict[str, Any],
    n: int,
    uploads: list[Upload],
    *,
    data: dict[str, Any] | None = None,
    created_at: datetime,
) -> Submission:
    """Commits a submission linking `uploads`, and writes their blobs where the command
    line looks for them (the blob folder beside the SQLite file)."""
    submission_id = _submission_id(n, created_at)
    files = tuple(
        StoredFile(
            field=upload.field,
            name=upload.name,
            size=len(upload.content),
            content_type=upload.content_type,
            sha256=hashlib.sha256(upload.content).hexdigest(),
            key=file_key(submission_id, index),
        )
        for index, upload in enumerate(uploads)
    )
    submission = Submission(
        submission_id=submission_id,
        form_id=form["form_id"],
        workspace_id=form["workspace_id"],
        status=SubmissionStatus.ACCEPTED,
        data=data if data is not None else {"name": f"Sender {n}"},
        created_at=created_at,
        files=files,
    )
    blobs = _blob_store(database_url)
    for stored, upload in zip(files, uploads, strict=True):
        async with await blobs.writer(
            stored.key, content_type=stored.content_type, max_size=stored.size
        ) as writer:
            # In pieces, as a request streams it.
            for start in range(0, len(upload.content), 1000):
                await writer.write(upload.content[start : start + 1000])
            await writer.commit()
    store = await open_sqlite_store(database_url)
    try:
        event_id = ids.time_sorted_id("evt", int(created_at.timestamp() * 1000), n.to_bytes(16))
        event = OutboxEvent.for_submission(event_id, submission)
        await store.submissions.commit(CommitPlan(submission, event, None, None))
    finally:
        await store.close()
    return submission


def _blob_root(database_url: str) -> Path:
    root = default_blob_url(database_url)
    assert root is not None
    return Path(root)


def _blob_store(database_url: str, at: datetime | None = None) -> LocalBlobStore:
    return LocalBlobStore(_blob_root(database_url), clock=FakeClock(at) if at else None)


BIG = secrets.token_bytes(300_000)  # several chunks of the store's reads
HOSTILE_NAME = '=HYPERLINK("evil.example";"click")'


@frozen
class Made:
    form_id: str
    with_files: Submission
    without_files: Submission
    hostile: Submission


@pytest.fixture
def made(cli: Cli, workspace_id: str, database_url: str, monkeypatch: pytest.MonkeyPatch) -> Made:
    monkeypatch.setenv("INTAKE_DOWNLOAD_SECRET", SECRET)
    monkeypatch.setenv("INTAKE_BASE_URL", BASE_URL)
    form = _create(cli, workspace_id, "--uploads")
    # A month old: a link signed from the submission's time would have expired.
    month_ago = NOW - timedelta(days=30)
    with_files = asyncio.run(
        _commit(
            database_url, form, 1,
            [
                Upload("cv", "Curriculum vitæ.txt", b"Ada Lovelace\nAnalyst\n"),
                Upload("photo", "scan.bin", BIG, "application/octet-stream"),
            ],
            created_at=month_ago,
        )
    )  # fmt: skip
    without_files = asyncio.run(_commit(database_url, form, 2, [], created_at=month_ago))
    hostile = asyncio.run(
        _commit(
            database_url, form, 3,
            [
                Upload("a", "../../escape.txt", b"one"),
                Upload("b", HOSTILE_NAME, b"two"),
                Upload("c", "x" * 250 + ".pdf", b"three"),
                Upload("d", "é" * 200 + ".txt", b"four"),
            ],
            created_at=month_ago + timedelta(seconds=1),
        )
    )  # fmt: skip
    return Made(form["form_id"], with_files, without_files, hostile)


def _check_link(entry: dict[str, Any], submission_id: str, index: int) -> None:
    url = urlsplit(entry["url"])
    assert f"{url.scheme}://{url.netloc}" == BASE_URL
    assert url.path == f"/v1/files/{submission_id}/{index}"
    query = parse_qs(url.query)
    signer = DownloadSigner(SECRET.encode(), BASE_URL)
    now = datetime.now(UTC)
    assert signer.verify(submission_id, index, query["expires"][0], query["signature"][0], now)
    # Fresh: valid from now for the link lifetime, not from the submission's time.
    expires_at = datetime.fromisoformat(entry["url_expires_at"])
    assert expires_at > now + timedelta(days=6)


def _described(upload_name: str, content: bytes, field: str, content_type: str) -> dict[str, Any]:
    digest = hashlib.sha256(content).hexdigest()
    return {
        "field": field,
        "name": upload_name,
        "size": len(content),
        "type": content_type,
        "sha256": digest,
        "digest": f"sha256:{digest}",
    }


def test_submissions_list_describes_each_file_with_a_fresh_link(cli: Cli, made: Made) -> None:
    listed = cli.json("submissions", "list", "--form", made.form_id)["submissions"]

    by_id = {s["submission_id"]: s for s in listed}
    files = by_id[made.with_files.submission_id]["files"]
    assert [{k: v for k, v in f.items() if not k.startswith("url")} for f in files] == [
        _described("Curriculum vitæ.txt", b"Ada Lovelace\nAnalyst\n", "cv", "text/plain"),
        _described("scan.bin", BIG, "photo", "application/octet-stream"),
    ]
    for index, entry in enumerate(files):
        _check_link(entry, made.with_files.submission_id, index)
    assert by_id[made.without_files.submission_id]["files"] == []


def test_submissions_list_for_people_counts_the_files(cli: Cli, made: Made) -> None:
    lines = cli("submissions", "list", "--form", made.form_id).out.splitlines()

    assert lines[0].split() == ["SUBMISSION", "STATUS", "CREATED", "SUBJECT", "FILES", "DATA"]
    counts = {line.split()[0]: line.split()[4] for line in lines[1:]}
    assert counts == {
        made.with_files.submission_id: "2",
        made.without_files.submission_id: "0",
        made.hostile.submission_id: "4",
    }


def _jsonl(text: str) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in text.splitlines()]
    return {row["submission_id"]: row for row in rows}


def test_export_jsonl_rows_carry_their_files(cli: Cli, made: Made) -> None:
    result = cli("submissions", "export", "--form", made.form_id, "--format", "jsonl")

    assert result.code == 0, result.err
    rows = _jsonl(result.out)
    files = rows[made.with_files.submission_id]["files"]
    assert [f["name"] for f in files] == ["Curriculum vitæ.txt", "scan.bin"]
    assert all("path" not in f for f in files)
    _check_link(files[1], made.with_files.submission_id, 1)
    assert rows[made.without_files.submission_id]["files"] == []


def _csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_export_csv_ends_with_the_files_names_defused(cli: Cli, made: Made) -> None:
    result = cli("submissions", "export", "--form", made.form_id, "--format", "csv")

    assert result.code == 0, result.err
    header, *rows = _csv(result.out)
    assert header[-1] == "files"
    cells = {row[0]: row[-1] for row in rows}
    assert cells[made.with_files.submission_id] == "Curriculum vitæ.txt; scan.bin"
    assert cells[made.without_files.submission_id] == ""
    assert cells[made.hostile.submission_id] == "; ".join(
        f.name for f in made.hostile.files
    )  # a formula that does not start the cell runs nowhere


def test_export_csv_defuses_a_files_cell_that_starts_a_formula(
    cli: Cli, workspace_id: str, database_url: str
) -> None:
    form = _create(cli, workspace_id, "--uploads")
    asyncio.run(_commit(database_url, form, 1, [Upload("a", "@SUM(A1).txt", b"x")], created_at=NOW))

    result = cli("submissions", "export", "--form", form["form_id"], "--format", "csv")

    header, row = _csv(result.out)
    assert dict(zip(header, row, strict=True))["files"] == "'@SUM(A1).txt"


def test_a_form_that_never_took_files_exports_no_files_column(
    cli: Cli, workspace_id: str, database_url: str
) -> None:
    form = _create(cli, workspace_id)
    asyncio.run(_commit(database_url, form, 1, [], created_at=NOW))

    header, _ = _csv(cli("submissions", "export", "--form", form["form_id"], "--format", "csv").out)

    assert header == ["submission_id", "created_at", "status", "subject", "reply_to", "name"]
    # Once a row has files, the column is there, uploads on or off.
    asyncio.run(_commit(database_url, form, 2, [Upload("a", "a.txt", b"x")], created_at=NOW))
    header, *_ = _csv(
        cli("submissions", "export", "--form", form["form_id"], "--format", "csv").out
    )
    assert header[-1] == "files"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_export_files_writes_each_file_beside_the_rows(
    cli: Cli, made: Made, tmp_path: Path
) -> None:
    target = tmp_path / "export" / "files"

    result = cli(
        "submissions", "export", "--form", made.form_id, "--format", "jsonl",
        "--files", str(target),
    )  # fmt: skip

    assert result.code == 0, result.err
    rows = _jsonl(result.out)
    first = made.with_files.submission_id
    entries = rows[first]["files"]
    assert [e["path"] for e in entries] == [f"{first}/0-Curriculum vitæ.txt", f"{first}/1-scan.bin"]
    assert (target / entries[0]["path"]).read_bytes() == b"Ada Lovelace\nAnalyst\n"
    assert (target / entries[1]["path"]).read_bytes() == BIG
    _check_link(entries[0], first, 0)
    # Names from senders never make a path: no escape, no name a file system refuses.
    hostile = made.hostile.submission_id
    paths = [e["path"] for e in rows[hostile]["files"]]
    assert paths[0] == f"{hostile}/0-escape.txt"
    assert paths[1] == f"{hostile}/1-{HOSTILE_NAME}"
    assert paths[2].endswith(".pdf")
    assert paths[3].endswith(".txt")
    for path in paths:
        assert len(path.rpartition("/")[2].encode()) <= 255
    assert [(target / p).read_bytes() for p in paths] == [b"one", b"two", b"three", b"four"]
    assert not (tmp_path / "escape.txt").exists()
    assert sorted(_tree(target)) == sorted([*[e["path"] for e in entries], *paths])
    # Readable by their owner only: they hold what visitors sent.
    assert _mode(target) == 0o700
    assert {_mode(target / first), _mode(target / hostile)} == {0o700}
    assert {_mode(target / p) for p in [*paths, entries[0]["path"]]} == {0o600}


def test_export_csv_with_files_writes_them_too(cli: Cli, made: Made, tmp_path: Path) -> None:
    result = cli(
        "submissions", "export", "--form", made.form_id, "--format", "csv",
        "--files", str(tmp_path / "files"),
    )  # fmt: skip

    assert result.code == 0, result.err
    tree = _tree(tmp_path / "files")
    assert tree[f"{made.with_files.submission_id}/1-scan.bin"] == BIG
    assert len(tree) == 6


def test_export_to_a_file_with_files_says_how_many(cli: Cli, made: Made, tmp_path: Path) -> None:
    output, files = tmp_path / "out.jsonl", tmp_path / "files"

    doc = cli.json(
        "submissions", "export", "--form", made.form_id, "--format", "jsonl",
        "--output", str(output), "--files", str(files),
    )  # fmt: skip

    assert doc == {
        "output": str(output),
        "format": "jsonl",
        "count": 3,
        "files_dir": str(files),
        "files": 6,
    }
    assert len(_tree(files)) == 6
    rows = _jsonl(output.read_text())
    assert rows[made.with_files.submission_id]["files"][1]["path"].endswith("/1-scan.bin")


def test_an_export_into_the_same_directory_again_replaces_the_files(
    cli: Cli, made: Made, tmp_path: Path
) -> None:
    target = tmp_path / "files"
    args = ("submissions", "export", "--form", made.form_id, "--format", "jsonl")
    assert cli(*args, "--files", str(target)).code == 0
    stale = target / made.with_files.submission_id / "0-Curriculum vitæ.txt"
    stale.write_bytes(b"changed since")

    assert cli(*args, "--files", str(target)).code == 0

    assert stale.read_bytes() == b"Ada Lovelace\nAnalyst\n"
    assert len(_tree(target)) == 6  # no temporary file left


def test_a_symbolic_link_in_the_export_directory_is_not_followed(
    cli: Cli, made: Made, tmp_path: Path
) -> None:
    target, elsewhere = tmp_path / "files", tmp_path / "elsewhere"
    target.mkdir()
    elsewhere.mkdir()
    (target / made.with_files.submission_id).symlink_to(elsewhere)

    result = cli(
        "submissions", "export", "--form", made.form_id, "--format", "jsonl",
        "--files", str(target), "--output", str(tmp_path / "out.jsonl"), "--json",
    )  # fmt: skip

    assert result.code == 1
    assert "a file or symbolic link is in the way" in result.document["error"]
    assert list(elsewhere.iterdir()) == []


def test_a_missing_or_damaged_blob_fails_the_export_after_the_rest(
    cli: Cli, made: Made, tmp_path: Path, database_url: str
) -> None:
    root = _blob_root(database_url)
    (root / file_key(made.with_files.submission_id, 0)).unlink()
    damaged = root / file_key(made.hostile.submission_id, 1)
    damaged.write_bytes(damaged.read_bytes()[:-1] + b"X")  # same size, other content
    target = tmp_path / "files"

    result = cli(
        "submissions", "export", "--form", made.form_id, "--format", "jsonl",
        "--files", str(target),
    )  # fmt: skip

    assert result.code == 1
    assert "2 files could not be exported" in result.err
    assert f"{made.with_files.submission_id} file 0 is missing" in result.err
    assert f"{made.hostile.submission_id} file 1 does not match" in result.err
    rows = _jsonl(result.out)
    assert rows[made.with_files.submission_id]["files"][0]["path"] is None
    assert rows[made.with_files.submission_id]["files"][1]["path"] is not None
    assert rows[made.hostile.submission_id]["files"][1]["path"] is None
    assert len(_tree(target)) == 4  # every other file

    with_output = cli(
        "submissions", "export", "--form", made.form_id, "--format", "jsonl",
        "--files", str(target), "--output", str(tmp_path / "out.jsonl"), "--json",
    )  # fmt: skip
    assert with_output.code == 1
    assert with_output.document["ok"] is False  # the one document: the error
    assert (tmp_path / "out.jsonl").exists()


def test_export_files_needs_a_blob_store(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An in-memory database has no blob folder beside it.
    monkeypatch.setenv("INTAKE_DATABASE_URL", "sqlite:///:memory:")
    target = tmp_path / "files"

    result = cli(
        "submissions", "export", "--form", "frm_any", "--format", "jsonl",
        "--files", str(target), "--json",
    )  # fmt: skip

    assert result.code == 1
    assert "--files needs a blob store" in result.document["error"]
    assert "INTAKE_BLOB_URL" in result.err
    assert not target.exists()


def test_a_file_uploaded_through_the_endpoint_is_listed_and_exported(
    cli: Cli, workspace_id: str, http: TestClient, tmp_path: Path
) -> None:
    form = _create(cli, workspace_id, "--uploads")
    response = http.post(
        f"/f/{form['public_form_key']}",
        data={"name": "Ada"},
        files={"cv": ("cv.txt", b"Analytical engines\n", "text/plain")},
        headers={"Accept": "application/json"},
    )
    assert response.status_code == 201, response.text
    submission_id = response.json()["submission_id"]

    (listed,) = cli.json("submissions", "list", "--form", form["form_id"])["submissions"]
    (entry,) = listed["files"]
    assert (entry["field"], entry["name"], entry["type"]) == ("cv", "cv.txt", "text/plain")
    assert entry["url"].startswith("http://127.0.0.1:8000/v1/files/")
    downloaded = http.get(entry["url"].removeprefix("http://127.0.0.1:8000"))
    assert downloaded.status_code == 200
    assert downloaded.content == b"Analytical engines\n"

    result = cli(
        "submissions", "export", "--form", form["form_id"], "--format", "jsonl",
        "--files", str(tmp_path / "files"),
    )  # fmt: skip
    assert result.code == 0, result.err
    assert _tree(tmp_path / "files") == {f"{submission_id}/0-cv.txt": b"Analytical engines\n"}


# -- the sweep in `intake purge` -----------------------------------------------------------


@frozen
class Blobs:
    linked: str
    old_orphan: str
    young_orphan: str
    foreign: str
    incoming: Path


@pytest.fixture
def blobs(cli: Cli, workspace_id: str, database_url: str) -> Blobs:
    """A linked file, an orphan two hours old, one just made, a file intake did not make,
    and the leftover of a write cut off two hours ago."""
    form = _create(cli, workspace_id, "--uploads")
    two_hours_ago = datetime.now(UTC) - timedelta(hours=2)
    linked = (
        asyncio.run(
            _commit(
                database_url, form, 1, [Upload("a", "a.txt", b"kept")], created_at=two_hours_ago
            )
        )
        .files[0]
        .key
    )

    async def put(key: str, at: datetime | None) -> None:
        store = _blob_store(database_url, at)
        async with await store.writer(key, content_type="text/plain", max_size=10) as writer:
            await writer.write(b"orphan")
            await writer.commit()

    old_orphan = file_key(_submission_id(7, two_hours_ago), 0)
    young_orphan = file_key(_submission_id(8, two_hours_ago), 0)
    foreign = "reports/2025"
    asyncio.run(put(old_orphan, two_hours_ago))
    asyncio.run(put(young_orphan, None))
    asyncio.run(put(foreign, two_hours_ago))
    incoming = _blob_root(database_url) / INCOMING_PREFIX / secrets.token_hex(16)
    incoming.parent.mkdir(mode=0o700, exist_ok=True)
    incoming.write_bytes(b"\0" * 2000)
    stamp = two_hours_ago.timestamp()
    os.utime(incoming, (stamp, stamp))
    return Blobs(linked, old_orphan, young_orphan, foreign, incoming)


def _keys(database_url: str) -> set[str]:
    async def listed() -> set[str]:
        return {info.key async for info in _blob_store(database_url).list()}

    return asyncio.run(listed())


def test_purge_sweeps_orphans_and_leftovers_and_keeps_the_rest(
    cli: Cli, blobs: Blobs, database_url: str
) -> None:
    doc = cli.json("purge")

    assert doc == {
        "idempotency": 0,
        "outbox": 0,
        "flagged_submissions": 0,
        "flagged_files": 0,
        "expired_submissions": 0,
        "expired_files": 0,
        "truncated_client_ips": 0,
        "autoresponse_records": 0,
        "invitations": 0,
        "spam_settled": 0,
        "orphan_files": 1,
        "incomplete_uploads": 1,
    }
    assert _keys(database_url) == {blobs.linked, blobs.young_orphan, blobs.foreign}
    assert not blobs.incoming.exists()
    assert cli.json("purge")["orphan_files"] == 0


def test_purge_says_what_it_swept_for_people(cli: Cli, blobs: Blobs) -> None:
    result = cli("purge")

    assert result.code == 0, result.err
    assert result.out.splitlines()[-2:] == [
        "deleted 1 orphaned uploaded file older than 1 hour",
        "deleted 1 incomplete upload older than 1 hour",
    ]


def test_the_upload_grace_flag_and_variable_replace_the_default(
    cli: Cli, blobs: Blobs, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    three_hours = cli.json("purge", "--upload-grace", "10800")
    assert (three_hours["orphan_files"], three_hours["incomplete_uploads"]) == (0, 0)
    monkeypatch.setenv("INTAKE_UPLOAD_GRACE", "10800")
    assert cli.json("purge")["orphan_files"] == 0
    assert blobs.old_orphan in _keys(database_url)

    result = cli("purge", "--upload-grace", "5400")
    # Read by meaning: purge says more of other things, and may say more later.
    assert [line for line in result.out.splitlines() if "upload" in line] == [
        "deleted 1 orphaned uploaded file older than 90 minutes",
        "deleted 1 incomplete upload older than 90 minutes",
    ]
    assert blobs.old_orphan not in _keys(database_url)


@pytest.mark.parametrize("grace", ["-1", "an hour", "1.5"])
def test_an_unreadable_upload_grace_is_a_usage_error(cli: Cli, grace: str) -> None:
    result = cli("purge", "--upload-grace", grace, "--json")

    assert result.code == 2
    assert "--upload-grace" in result.err


def test_an_upload_grace_within_the_upload_timeout_is_refused(
    cli: Cli, blobs: Blobs, database_url: str
) -> None:
    result = cli("purge", "--upload-grace", "300", "--json")

    assert result.code == 1
    assert "INTAKE_UPLOAD_TIMEOUT" in result.document["error"]
    # Refused before anything was deleted.
    assert blobs.old_orphan in _keys(database_url)
    assert blobs.incoming.exists()


def test_purge_without_a_blob_store_sweeps_nothing(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_DATABASE_URL", "sqlite:///:memory:")

    assert cli.json("purge") == {
        "idempotency": 0,
        "outbox": 0,
        "flagged_submissions": 0,
        "flagged_files": 0,
        "expired_submissions": 0,
        "expired_files": 0,
        "truncated_client_ips": 0,
        "autoresponse_records": 0,
        "invitations": 0,
        "spam_settled": 0,
    }
    assert len(cli("purge").out.splitlines()) == 8


def test_purge_reports_a_blob_store_it_cannot_use(
    cli: Cli, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the blob folder should be")
    monkeypatch.setenv("INTAKE_BLOB_URL", str(blocker / "blobs"))

    result = cli("purge", "--json")

    assert result.code == 1
    assert result.document["error"].startswith("the blob store is unavailable")
