"""What each command may make of the database: `intake migrate` makes it, a command that
only reads makes nothing and says what is missing, and neither SQLite nor PostgreSQL
answers a command from a database that was never migrated."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.conftest import new_postgres_database
from tests.support.processes import TEST_SECRET_KEY

READ_ONLY = [
    ["workspace", "list"],
    ["workspace", "show", "ws_x"],
    ["form", "list"],
    ["form", "show", "frm_x"],
    ["key", "list", "--workspace", "ws_x"],
    ["submissions", "list", "--form", "frm_x"],
    ["submissions", "export", "--form", "frm_x", "--format", "csv"],
    ["webhook", "list", "--form", "frm_x"],
    ["notify", "list", "--form", "frm_x"],
    ["outbox", "list"],
]


def _tables(path: Path) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[0] for row in conn.execute("SELECT name FROM sqlite_master")]


@pytest.mark.parametrize("argv", READ_ONLY, ids=" ".join)
def test_a_read_only_command_makes_no_database_and_says_there_is_none(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    missing = tmp_path / "missing" / "intake.db"
    monkeypatch.setenv("INTAKE_DATABASE_URL", f"sqlite:///{missing}")

    result = cli(*argv)

    assert result.code == 1
    assert "does not exist" in result.err
    assert "run `intake migrate`" in result.err
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("argv", READ_ONLY, ids=" ".join)
def test_a_read_only_command_refuses_a_database_never_migrated(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    empty = tmp_path / "empty.db"
    empty.touch(mode=0o600)  # an empty file is an empty database
    monkeypatch.setenv("INTAKE_DATABASE_URL", f"sqlite:///{empty}")

    result = cli(*argv, "--json")

    assert result.code == 1
    assert "not migrated" in result.document["error"]
    assert "run `intake migrate`" in result.document["error"]
    assert _tables(empty) == []


def test_read_only_commands_answer_once_migrate_has_made_the_database(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = tmp_path / "fresh" / "intake.db"
    monkeypatch.setenv("INTAKE_DATABASE_URL", f"sqlite:///{fresh}")

    cli.json("migrate")

    assert cli.json("workspace", "list") == {"workspaces": []}
    assert cli.json("outbox", "list")["events"] == []


def test_a_command_that_writes_still_prepares_the_embedded_store(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_DATABASE_URL", f"sqlite:///{tmp_path / 'new' / 'intake.db'}")

    created = cli.json("workspace", "create", "--name", "First")

    assert [w["workspace_id"] for w in cli.json("workspace", "list")["workspaces"]] == [
        created["workspace_id"]
    ]


# PostgreSQL


@pytest.fixture
def empty_postgres(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A new database with nothing in it, as INTAKE_DATABASE_URL (in place of the cli
    fixture's SQLite file, once it has cleaned the environment)."""
    with new_postgres_database() as url:
        monkeypatch.setenv("INTAKE_DATABASE_URL", url)
        monkeypatch.setenv("INTAKE_SECRET_KEY", TEST_SECRET_KEY)
        yield url


@pytest.mark.services
def test_migrate_on_a_new_postgres_database_logs_no_failure(
    cli: Cli, empty_postgres: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)

    result = cli("migrate", "--json")

    assert result.code == 0, result.err
    assert result.document["applied"]
    # Nothing read from a table before the migration made it.
    said = [str(vars(record)) for record in caplog.records]
    assert not [line for line in said if "does not exist" in line or "wait for" in line]


@pytest.mark.services
@pytest.mark.parametrize(
    "argv", [["demo"], ["workspace", "list"], ["relay", "--once"]], ids=" ".join
)
def test_a_command_on_an_unmigrated_postgres_database_says_to_migrate(
    cli: Cli, empty_postgres: str, argv: list[str]
) -> None:
    result = cli(*argv)

    assert result.code == 1
    assert "intake: error: the database is not migrated" in result.err
    assert "run `intake migrate`" in result.err
    assert "unavailable" not in result.err


@pytest.mark.services
def test_demo_works_on_a_postgres_database_once_migrated(cli: Cli, empty_postgres: str) -> None:
    cli.json("migrate")

    demo = cli.json("demo")

    assert cli.json("form", "show", demo["form_id"])["name"] == "demo"
