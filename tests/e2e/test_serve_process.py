"""`intake serve` as an operator runs it: a real process on a real port, set up and read
back with the installed command line."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.processes import ServedProcess, clean_env, run_cli


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(INTAKE_DATABASE_URL=f"sqlite:///{tmp_path / 'intake.db'}")


@pytest.fixture
def server(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    # SIGINT, as Ctrl-C would: the server must then exit with 0.
    with ServedProcess(env, tmp_path / "serve.log", stop_signal=signal.SIGINT) as served:
        yield served.base
    assert served.returncode == 0, served.log_text()
    assert f"intake serving on {served.base}" in served.log_text()


@pytest.mark.slow
def test_a_served_form_accepts_a_submission_over_the_socket(
    env: dict[str, str], server: str
) -> None:
    workspace = run_cli(env, "workspace", "create", "--name", "E2E")
    form = run_cli(env, "form", "create", "--workspace", workspace["workspace_id"])

    response = httpx.post(
        f"{server}/f/{form['public_form_key']}",
        json={"email": "you@example.com", "message": "Hello over a socket"},
        timeout=10.0,
    )

    assert response.status_code == 201, response.text
    body = response.json()
    assert body["ok"] is True
    submission_id = body["submission_id"]
    listed = run_cli(env, "submissions", "list", "--form", form["form_id"])["submissions"]
    assert [s["submission_id"] for s in listed] == [submission_id]
    assert listed[0]["status"] == "accepted"
    assert listed[0]["data"] == {"email": "you@example.com", "message": "Hello over a socket"}
