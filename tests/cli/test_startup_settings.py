"""What a process says of its settings as it starts: the store and the Redis it uses,
never with a password; the INTAKE_* variables it does not read; and a setting it cannot
use, blamed on the variable that holds it."""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Cli
from tests.support.processes import TEST_SECRET_KEY


@pytest.mark.parametrize(
    "redis_url",
    ["redis://:hunter2@localhost:notaport/0", "http://localhost:6379/0"],
    ids=["bad port", "bad scheme"],
)
def test_a_malformed_redis_url_is_blamed_on_intake_redis_url(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, redis_url: str
) -> None:
    monkeypatch.setenv("INTAKE_REDIS_URL", redis_url)

    result = cli("serve", "--port", "1", "--json")

    assert result.code == 1
    error = result.document["error"]
    assert error.startswith("INTAKE_REDIS_URL: ")
    assert "INTAKE_DATABASE_URL" not in error
    assert "hunter2" not in result.out + result.err


def test_a_malformed_database_url_is_still_blamed_on_intake_database_url(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_DATABASE_URL", "sqlite:/intake.db")

    result = cli("migrate", "--json")

    assert result.code == 1
    assert result.document["error"].startswith("INTAKE_DATABASE_URL: ")


# -- what a process says it uses --------------------------------------------------------


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """`intake serve` goes as far as uvicorn, which is not started."""

    def listen(host: str, port: int) -> socket.socket:
        return socket.socket()

    def run_server(listener: socket.socket, *args: Any, **kwargs: Any) -> None:
        listener.close()

    monkeypatch.setattr("intake.entrypoints.cli.serve.listen", listen)
    monkeypatch.setattr("intake.entrypoints.cli.serve.run_server", run_server)


def _said(caplog: pytest.LogCaptureFixture, level: int = logging.INFO) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "intake.cli" and r.levelno == level]


@pytest.mark.usefixtures("no_server")
def test_serve_says_which_store_and_which_redis_it_uses_without_their_passwords(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.INFO, logger="intake")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTAKE_DATABASE_URL", "sqlite:///data/intake.db")  # relative
    monkeypatch.setenv("INTAKE_REDIS_URL", "redis://:hunter2@127.0.0.1:6390/3")

    result = cli("serve", "--workers", "2")

    assert result.code == 0, result.err
    where = tmp_path / "data" / "intake.db"
    assert f"store: SQLite at {where}; rate limits: Redis at :***@127.0.0.1:6390/3" in _said(caplog)
    assert "hunter2" not in result.out + result.err + caplog.text


@pytest.mark.usefixtures("no_server")
def test_serve_without_redis_says_each_process_keeps_its_own_windows(
    cli: Cli, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="intake")

    assert cli("serve").code == 0

    path = database_url.removeprefix("sqlite:///")
    assert _said(caplog)[0] == (
        f"store: SQLite at {path}; rate limits: no Redis: each process keeps its own "
        "rate-limit windows"
    )


@pytest.mark.parametrize("argv", [["migrate"], ["relay", "--once"]], ids=" ".join)
def test_migrate_and_the_relay_say_which_store_they_use(
    cli: Cli, database_url: str, caplog: pytest.LogCaptureFixture, argv: list[str]
) -> None:
    caplog.set_level(logging.INFO, logger="intake")

    assert cli(*argv).code == 0

    assert f"store: SQLite at {database_url.removeprefix('sqlite:///')}" in _said(caplog)


def test_a_postgres_store_is_named_without_its_password_or_query(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="intake")
    # Nothing listens there: the line comes before the first connection fails.
    monkeypatch.setenv(
        "INTAKE_DATABASE_URL",
        f"postgresql://intake:hunter2@127.0.0.1:{_closed_port()}/intake?password=hunter3",
    )
    monkeypatch.setenv("INTAKE_SECRET_KEY", TEST_SECRET_KEY)

    result = cli("migrate")

    assert result.code == 1
    (said,) = _said(caplog)
    assert said.startswith("store: PostgreSQL at intake:***@127.0.0.1:")
    assert said.endswith("/intake")
    assert "hunter" not in result.out + result.err + caplog.text


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_missing_database_is_named_by_its_absolute_path(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTAKE_DATABASE_URL", "sqlite:///elsewhere/intake.db")

    result = cli("workspace", "list")

    assert result.code == 1
    where = tmp_path / "elsewhere" / "intake.db"
    assert f"the database {where} does not exist: run `intake migrate`" in result.err


def test_a_database_not_migrated_is_named_by_its_absolute_path(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.db").touch(mode=0o600)
    monkeypatch.setenv("INTAKE_DATABASE_URL", "sqlite:///empty.db")

    result = cli("workspace", "list")

    assert result.code == 1
    assert f"the database {tmp_path / 'empty.db'} is not migrated" in result.err


# -- variables intake does not read -----------------------------------------------------


def test_a_misspelled_variable_is_warned_of_with_the_setting_it_means(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="intake")
    monkeypatch.setenv("INTAKE_DATABSE_URL", "postgresql://intake:hunter2@db/intake")
    monkeypatch.setenv("INTAKE_WORKER", "2")
    monkeypatch.setenv("INTAKE_SHINY", "yes")

    assert cli("workspace", "list", "--json").code == 0

    assert _said(caplog, logging.WARNING) == [
        "INTAKE_DATABSE_URL is not a variable intake reads: it is ignored; did you mean "
        "INTAKE_DATABASE_URL?",
        "INTAKE_SHINY is not a variable intake reads: it is ignored (docs/configuration.md "
        "lists them)",
        "INTAKE_WORKER is not a variable intake reads: it is ignored; did you mean INTAKE_WORKERS?",
    ]
    assert "hunter2" not in caplog.text  # a value is never quoted


@pytest.mark.parametrize(
    "name",
    [
        "INTAKE_TEST_DATABASE_URL",
        "INTAKE_TEST_REDIS_URL",
        "INTAKE_REQUIRE_SERVICES",
        "INTAKE_BENCH_REDIS_URL",
        "INTAKE_API_KEY",
        "INTAKE_READ_KEY",
    ],
)
def test_the_test_suites_and_the_examples_variables_are_not_warned_of(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, name: str
) -> None:
    monkeypatch.setenv(name, "x")

    assert cli("workspace", "list", "--json").code == 0

    assert _said(caplog, logging.WARNING) == []
