"""The command line as a whole: --json placement, exit codes, configuration errors,
`migrate`, `serve`'s handover to uvicorn, and the installed console script."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from intake.entrypoints.cli import main
from tests.cli.conftest import Cli
from tests.support.processes import console_script


def test_json_is_accepted_before_and_after_the_subcommand(cli: Cli) -> None:
    before = cli("--json", "workspace", "create", "--name", "A")
    after = cli("workspace", "create", "--name", "B", "--json")
    middle = cli("workspace", "--json", "list")

    assert before.code == after.code == middle.code == 0
    assert before.document["name"] == "A"
    assert after.document["name"] == "B"
    assert len(middle.document["workspaces"]) == 2


def test_migrate_prints_what_it_applied(cli: Cli) -> None:
    doc = cli.json("migrate")

    assert isinstance(doc["applied"], list)
    # The schema is current now: a second run has nothing to apply.
    assert cli.json("migrate") == {"applied": [], "sealed": 0}
    assert cli("migrate").out == "the database schema is up to date\n"


def test_usage_errors_exit_2_with_a_message_and_no_traceback(cli: Cli) -> None:
    for argv in ([], ["frobnicate"], ["workspace"], ["workspace", "create", "--name"]):
        result = cli(*argv)
        assert result.code == 2, argv
        assert "usage: intake" in result.err
        assert result.out == ""


def test_abbreviated_flags_are_not_guessed(cli: Cli) -> None:
    # A script's `--work` must not silently mean `--workspace` (nor a later `--workers`).
    assert cli("form", "create", "--work", "ws_x").code == 2


def test_a_usage_error_with_json_is_also_a_json_document(cli: Cli) -> None:
    result = cli("workspace", "show", "--json")

    assert result.code == 2
    assert result.document["ok"] is False
    assert "ID" in result.document["error"]


def test_help_and_version_exit_0(cli: Cli) -> None:
    assert cli("--help").code == 0
    assert cli("workspace", "create", "--help").code == 0
    version = cli("--version")
    assert version.code == 0
    assert version.out.startswith("intake ")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("INTAKE_PORT", "eighty", "INTAKE_PORT"),
        ("INTAKE_DATABASE_URL", "mysql://db/intake", "INTAKE_DATABASE_URL"),
        ("INTAKE_DATABASE_URL", "sqlite:/intake.db", "INTAKE_DATABASE_URL"),
        ("INTAKE_LOG_LEVEL", "chatty", "INTAKE_LOG_LEVEL"),
    ],
)
def test_a_configuration_error_exits_1_naming_the_variable(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    monkeypatch.setenv(name, value)

    result = cli("workspace", "list", "--json")

    assert result.code == 1
    assert message in result.document["error"]
    assert message in result.err


def test_serve_refuses_several_workers_without_redis(cli: Cli) -> None:
    result = cli("serve", "--workers", "2", "--json")

    assert result.code == 1
    assert "INTAKE_REDIS_URL" in result.document["error"]


def test_serve_refuses_workers_from_the_environment_too(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_WORKERS", "4")

    assert cli("serve").code == 1


class _Uvicorn:
    """Stands in for the listening socket and uvicorn: records the address and what
    uvicorn would have been given, instead of serving."""

    def __init__(self) -> None:
        self.bound: list[tuple[str, int]] = []
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def listen(self, host: str, port: int) -> socket.socket:
        self.bound.append((host, port))
        return socket.socket()

    def run_server(
        self, listener: socket.socket, *args: Any, on_ready: Callable[[], None], **kwargs: Any
    ) -> None:
        listener.close()
        self.calls.append((args, kwargs))
        on_ready()  # as the workers would once they serve


@pytest.fixture
def uvicorn_run(monkeypatch: pytest.MonkeyPatch) -> _Uvicorn:
    fake = _Uvicorn()
    monkeypatch.setattr("intake.entrypoints.cli.serve.listen", fake.listen)
    monkeypatch.setattr("intake.entrypoints.cli.serve.run_server", fake.run_server)
    return fake


def test_serve_runs_the_app_factory_under_uvicorn(cli: Cli, uvicorn_run: _Uvicorn) -> None:
    result = cli("serve", "--host", "127.0.0.2", "--port", "8123")

    assert result.code == 0, result.err
    assert result.out == "intake serving on http://127.0.0.2:8123 (1 worker)\n"
    assert uvicorn_run.bound == [("127.0.0.2", 8123)]
    ((args, kwargs),) = uvicorn_run.calls
    assert args == ("intake.entrypoints.http.app:served_app",)
    assert kwargs["factory"] is True
    assert (kwargs["host"], kwargs["port"], kwargs["workers"]) == ("127.0.0.2", 8123, 1)
    assert kwargs["access_log"] is False
    assert kwargs["server_header"] is False
    # uvicorn never rewrites the client address; the app does, for trusted proxies only.
    assert kwargs["proxy_headers"] is False
    assert kwargs["forwarded_allow_ips"] == []


def test_serve_defaults_come_from_the_environment(
    cli: Cli, uvicorn_run: _Uvicorn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_HOST", "::1")
    monkeypatch.setenv("INTAKE_PORT", "9000")
    monkeypatch.setenv("INTAKE_REDIS_URL", "redis://localhost:6379/0")
    monkeypatch.setenv("INTAKE_WORKERS", "3")
    monkeypatch.setenv("INTAKE_LOG_LEVEL", "warning")

    doc = cli.json("serve")

    assert doc == {"url": "http://[::1]:9000", "host": "::1", "port": 9000, "workers": 3}
    assert uvicorn_run.bound == [("::1", 9000)]
    ((_, kwargs),) = uvicorn_run.calls
    assert (kwargs["host"], kwargs["port"], kwargs["workers"]) == ("::1", 9000, 3)
    assert kwargs["log_level"] == 30  # logging.WARNING


def test_serve_usage_errors(cli: Cli) -> None:
    assert cli("serve", "--port", "70000").code == 2
    assert cli("serve", "--workers", "0").code == 2


def test_the_installed_console_script_answers_in_json(database_url: str) -> None:
    env = {**os.environ, "INTAKE_DATABASE_URL": database_url}
    script = console_script()

    created = subprocess.run(
        [script, "workspace", "create", "--name", "Scripted", "--json"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    workspace_id = json.loads(created.stdout)["workspace_id"]

    refused = subprocess.run(
        [script, "form", "create", "--workspace", "ws_nope", "--json"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert refused.returncode == 1
    assert json.loads(refused.stdout) == {"ok": False, "error": "no workspace 'ws_nope'"}
    assert "Traceback" not in refused.stderr

    listed = subprocess.run(
        [script, "--json", "workspace", "list"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert [w["workspace_id"] for w in json.loads(listed.stdout)["workspaces"]] == [workspace_id]


def test_main_reads_sys_argv_when_given_no_arguments(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["intake", "workspace", "list", "--json"])

    assert main() == 0
    assert json.loads(capsys.readouterr().out) == {"workspaces": []}
