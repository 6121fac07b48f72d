"""What the installed `intake relay` writes to its log at the most verbose level, with a
webhook URL that carries credentials and a token, and a mail recipient: never the URL,
any part of it, the recipient or the submission's contents; nothing from a library
below a warning."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import anyio
import pytest

from intake.config import Settings
from intake.entrypoints.library import Intake
from intake.library_runtime import open_runtime
from tests.conftest import new_postgres_database
from tests.support.processes import IntakeProcess, clean_env, console_script, wait_for
from tests.support.receiver import Receiver
from tests.support.smtp_server import SmtpServer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DEADLINE = 60.0  # seconds for anything a process is waited for
MARKER = "m4rk3r9q"
MAIL_TO = f"owner-{MARKER}@example.com"
# In the URL (userinfo, path, query), the recipient and the contents alike; and the
# visitor's address, which the submission carries.
SECRETS = (MARKER, "ada@example.com")
LEVELS = ["trace", "debug", "info"]


def marked_url(receiver: Receiver) -> str:
    """The receiver's address with the marker in the userinfo, the path and the query."""
    return (
        f"http://user-{MARKER}:pw-{MARKER}@127.0.0.1:{receiver.port}/hook-{MARKER}?token={MARKER}-q"
    )


def prepared(database: str, receiver: Receiver, smtp: SmtpServer, level: str) -> dict[str, str]:
    """A database with a form whose webhook is the marked URL and whose recipient is
    MAIL_TO, and one submission waiting; the environment a relay runs in."""
    env = clean_env(
        INTAKE_DATABASE_URL=database,
        INTAKE_WEBHOOK_ALLOW_PRIVATE="true",  # the receiver is plain http on 127.0.0.1
        INTAKE_SMTP_URL=smtp.url,
        INTAKE_MAIL_FROM="intake@example.com",
        INTAKE_LOG_LEVEL=level,
    )

    async def setup() -> None:
        async with open_runtime(Settings.from_env(env)) as runtime:
            await runtime.store.migrate()
            workspace = await runtime.services.workspaces.create("Logs")
            form = await runtime.services.forms.create(workspace.workspace_id)
            await runtime.services.webhooks.add(form.form_id, marked_url(receiver))
            await runtime.services.recipients.add(form.form_id, MAIL_TO)
            result = await Intake(runtime).submit(
                form.public_form_key,
                {"email": "ada@example.com", "message": f"contents-{MARKER}"},
            )
            assert result.ok, result

    anyio.run(setup)
    return env


def assert_clean(log: str) -> None:
    # (The running relay's log file also holds its summary line on stdout.)
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    # The relay did log its work at this level: the scan below looked at real lines.
    assert any(e["logger"] == "intake.relay" and e["message"] == "delivered" for e in lines)
    for line in log.splitlines():
        for secret in SECRETS:
            assert secret not in line, line
    for entry in lines:
        if not entry["logger"].startswith("intake"):
            assert entry["level"] in ("warning", "error", "critical"), entry


@pytest.mark.parametrize("level", LEVELS)
def test_relay_once_logs_no_url_recipient_or_contents(
    tmp_path: Path, receiver: Receiver, smtp: SmtpServer, level: str
) -> None:
    env = prepared(f"sqlite:///{tmp_path / 'intake.db'}", receiver, smtp, level)
    assert_relay_once_is_clean(env, receiver, smtp)


@pytest.mark.services
def test_relay_once_on_postgresql_logs_no_url_recipient_or_contents(
    receiver: Receiver, smtp: SmtpServer
) -> None:
    with new_postgres_database(migrated=True) as url:
        env = prepared(url, receiver, smtp, "trace")
        assert_relay_once_is_clean(env, receiver, smtp)


def assert_relay_once_is_clean(env: dict[str, str], receiver: Receiver, smtp: SmtpServer) -> None:
    done = subprocess.run(
        [console_script(), "relay", "--once", "--json"],
        env=env, capture_output=True, text=True, timeout=DEADLINE, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["delivered"] == 2
    (request,) = receiver.requests
    assert request.path == f"/hook-{MARKER}?token={MARKER}-q"  # the URL was used
    assert len(smtp.messages) == 1
    assert_clean(done.stderr)


def test_the_running_relay_logs_no_url_recipient_or_contents(
    tmp_path: Path, receiver: Receiver, smtp: SmtpServer
) -> None:
    env = prepared(f"sqlite:///{tmp_path / 'intake.db'}", receiver, smtp, "trace")
    relay = IntakeProcess(env, tmp_path / "relay.log", ["relay"], stop_signal=signal.SIGTERM)

    with relay:
        wait_for(
            lambda: len(receiver.requests) == 1 and len(smtp.messages) == 1,
            DEADLINE,
            "the webhook and the mail",
            relay.describe,
        )
        wait_for(lambda: '"delivered"' in relay.log_text(), DEADLINE, "the log lines")

    assert relay.returncode == 0, relay.describe()
    assert_clean(relay.log_text())
