"""`intake serve` as an operator runs it: a real process on a real port, set up and read
back with the installed command line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

STARTUP_DEADLINE = 20.0  # seconds for the server to answer /healthz
SHUTDOWN_DEADLINE = 10.0


def _console_script() -> str:
    beside = Path(sys.executable).parent / "intake"
    found = str(beside) if beside.exists() else shutil.which("intake")
    assert found, "the intake console script is not installed"
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _intake(env: Mapping[str, str], *argv: str) -> dict[str, Any]:
    done = subprocess.run(
        [_console_script(), *argv, "--json"],
        env=dict(env), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert isinstance(document, dict)
    return document


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("INTAKE_")}
    return {**clean, "INTAKE_DATABASE_URL": f"sqlite:///{tmp_path / 'intake.db'}"}


def _wait_until_healthy(base: str, server: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"intake serve exited with {server.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass  # not listening yet
        time.sleep(0.1)
    pytest.fail(f"no answer on /healthz within {STARTUP_DEADLINE} s:\n{log.read_text()}")


@pytest.fixture
def server(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    # Output to a file, not a pipe: a pipe nobody reads could fill and stall the server.
    log = tmp_path / "serve.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [_console_script(), "serve", "--port", str(port)],
            env=env, stdout=sink, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_until_healthy(base, process, log)
        yield base
    finally:
        code = _stop(process)
    assert code == 0, log.read_text()
    assert f"intake serving on {base}" in log.read_text()


def _stop(process: subprocess.Popen[str]) -> int:
    """SIGINT, as Ctrl-C would, then a bounded wait; a server that hangs is killed."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=SHUTDOWN_DEADLINE)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


@pytest.mark.slow
def test_a_served_form_accepts_a_submission_over_the_socket(
    env: dict[str, str], server: str
) -> None:
    workspace = _intake(env, "workspace", "create", "--name", "E2E")
    form = _intake(env, "form", "create", "--workspace", workspace["workspace_id"])

    response = httpx.post(
        f"{server}/f/{form['public_form_key']}",
        json={"email": "you@example.com", "message": "Hello over a socket"},
        timeout=10.0,
    )

    assert response.status_code == 201, response.text
    body = response.json()
    assert body["ok"] is True
    submission_id = body["submission_id"]
    listed = _intake(env, "submissions", "list", "--form", form["form_id"])["submissions"]
    assert [s["submission_id"] for s in listed] == [submission_id]
    assert listed[0]["status"] == "accepted"
    assert listed[0]["data"] == {"email": "you@example.com", "message": "Hello over a socket"}
