"""`intake serve` as an operator runs it: a real process on a real port, set up and read
back with the command line."""

from __future__ import annotations

import secrets
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from psycopg import sql

from tests.conftest import unavailable
from tests.contract.conftest import admin_url, drop_database
from tests.contract.conftest import database_url as with_database
from tests.support.processes import (
    CLI_TIMEOUT,
    STARTUP_TIMEOUT,
    ServedProcess,
    clean_env,
    console_script,
    free_port,
    run_cli,
    wait_for,
)

FIELDS = {"email": "you@example.com", "message": "Hello"}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(INTAKE_DATABASE_URL=f"sqlite:///{tmp_path / 'intake.db'}")


@pytest.fixture
def server(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    # SIGINT, as Ctrl-C would: the server must then exit with 0.
    with ServedProcess(env, tmp_path / "serve.log", stop_signal=signal.SIGINT) as served:
        yield served.base
    assert served.returncode == 0, served.log_text()
    log = served.log_text()
    said = log.index(f"intake serving on {served.base} (1 worker)")
    assert "Application startup complete." in log[:said]  # said once it serves


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


@pytest.mark.slow
def test_a_port_in_use_is_refused_in_one_line_with_exit_1(env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        done = subprocess.run(
            [console_script(), "serve", "--port", str(port)],
            env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT, check=False,
        )  # fmt: skip

    assert done.returncode == 1, done.stderr
    assert "serving on" not in done.stdout  # said only once the port is ours
    assert "Traceback" not in done.stderr
    (said,) = [line for line in done.stderr.splitlines() if f"127.0.0.1:{port}" in line]
    assert said == f"intake: error: cannot listen on 127.0.0.1:{port}: address already in use"


@pytest.mark.slow
def test_several_workers_are_said_to_serve_once_they_all_answer_and_a_down_redis_at_once(
    env: dict[str, str], tmp_path: Path
) -> None:
    token = "metrics-token-of-the-serve-process-test"
    redis_down = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    served = ServedProcess(
        {**env, "INTAKE_REDIS_URL": redis_down, "INTAKE_METRICS_TOKEN": token},
        tmp_path / "serve.log",
        workers=2,
    )
    served.start(wait=False)
    try:
        wait_for(
            lambda: "intake serving on" in served.log_text(),
            STARTUP_TIMEOUT * 3,
            "intake serve to say it serves",
            served.describe,
        )
        # Right after the line, fresh connections: each is answered.
        answers = [httpx.get(f"{served.base}/readyz", timeout=10.0) for _ in range(6)]
        metrics = httpx.get(
            f"{served.base}/metrics", headers={"Authorization": f"Bearer {token}"}, timeout=10.0
        )
    finally:
        served.stop()

    log = served.log_text()
    said = log.index(f"intake serving on {served.base} (2 workers)")
    # Both workers had started their application and were serving before it was said.
    assert log.count("Application startup complete.", 0, said) == 2, log
    assert [a.status_code for a in answers] == [200] * 6
    # Redis down from the start: logged before any submission, and still ready. Each
    # worker, which limits on its own meanwhile, says it once; the check `intake serve`
    # makes before it starts them does not say it again.
    down = "Redis unreachable: rate limits are held per process"
    assert log.count(down, 0, said) == 2, log
    assert log.count(down) == 2, log
    assert all(a.json() == {"ok": True, "rate_limits": "fallback"} for a in answers)
    assert "\nintake_rate_limiter_fallback 1.0\n" in metrics.text


@pytest.fixture
def postgres_not_there_yet() -> Iterator[tuple[str, str]]:
    """The admin URL of a reachable server, and the URL of a database on it that does
    not exist yet (the test makes it); dropped afterwards."""
    admin = admin_url()
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as error:
        unavailable(f"PostgreSQL is not reachable: {error}")
    name = f"intake_test_{secrets.token_hex(6)}"
    try:
        yield admin, with_database(admin, name)
    finally:
        drop_database(admin, name)


def _make_database(admin: str, url: str) -> None:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(
                sql.Identifier(name)
            )
        )


@pytest.mark.slow
@pytest.mark.services
def test_serve_stays_up_until_postgres_answers_then_migrates_it_and_is_ready(
    postgres_not_there_yet: tuple[str, str], tmp_path: Path
) -> None:
    admin, url = postgres_not_there_yet
    # The pool's own 2 s: a patient pool would hold the start for its whole wait each time
    # it asks the database that is not there yet.
    env = clean_env(INTAKE_DATABASE_URL=url, INTAKE_DATABASE_POOL_TIMEOUT="2")

    with ServedProcess(env, tmp_path / "serve.log") as server:  # up: /healthz answers
        not_ready = httpx.get(f"{server.base}/readyz", timeout=10.0)
        refused = httpx.post(f"{server.base}/f/any_key", json=FIELDS, timeout=10.0)

        _make_database(admin, url)  # empty: the server migrates it once it answers
        wait_for(
            lambda: server.answers(f"{server.base}/readyz"),
            STARTUP_TIMEOUT,
            "/readyz to answer 200 once the database is there",
            server.describe,
        )
        workspace = run_cli(env, "workspace", "create", "--name", "Late")
        form = run_cli(env, "form", "create", "--workspace", workspace["workspace_id"])
        accepted = httpx.post(f"{server.base}/f/{form['public_form_key']}", json=FIELDS)

    assert (not_ready.status_code, not_ready.headers.get("retry-after")) == (503, "1")
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "service_unavailable"
    assert refused.headers.get("retry-after")
    assert accepted.status_code == 201, accepted.text
    assert f"intake serving on {server.base}" in server.log_text()
