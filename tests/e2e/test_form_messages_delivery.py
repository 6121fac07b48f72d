"""What a form mails and keeps, end to end through `intake relay --once`, on the
embedded SQLite file and on PostgreSQL, to a real local SMTP server (aiosmtpd) and
webhook receiver: the autoresponder answers one address once an hour however many
submissions name it, never a spam or honeypot submission; the owner's templates shape
the mails, with submitted values escaped; a forward-only form keeps nothing of a
submission but its metadata once every destination has it. The hour needs time to pass,
so that case moves the clock of an in-process relay on the same database."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from starlette.testclient import TestClient

from intake.adapters.memory import FakeClock
from intake.config import Settings
from intake.domain.model import SubmissionStatus
from intake.entrypoints.http.app import create_app
from intake.entrypoints.library import Intake
from intake.library_runtime import open_runtime
from intake.service.admin.message_changes import MessageChanges
from tests.conftest import new_postgres_database
from tests.support.processes import clean_env, run_cli
from tests.support.receiver import Receiver
from tests.support.smtp_server import SmtpServer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

VICTIM = "victim@example.com"
OWNER = "owner@example.com"
HOSTILE = '<script>alert("x")</script><a href="https://evil.example">win</a>'
SPAM = '<a href="https://a.example">buy</a> https://b.example https://c.example https://d.example'


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'intake.db'}"
    else:
        with new_postgres_database(migrated=True) as url:
            yield url


@pytest.fixture
def env(database: str, smtp: SmtpServer, tmp_path: Path) -> dict[str, str]:
    return clean_env(
        INTAKE_DATABASE_URL=database,
        INTAKE_WEBHOOK_ALLOW_PRIVATE="true",
        INTAKE_SMTP_URL=smtp.url,
        INTAKE_MAIL_FROM="forms@example.com",
        INTAKE_BLOB_URL=str(tmp_path / "blobs"),
    )


def _form(env: dict[str, str], messages: MessageChanges, hook: str | None = None) -> str:
    """A form with `messages`, OWNER as its recipient and `hook` as its webhook; its
    public key."""

    async def setup() -> str:
        async with open_runtime(Settings.from_env(env)) as runtime:
            await runtime.store.migrate()
            services = runtime.services
            workspace = await services.workspaces.create("E2E", monthly_limit=1000)
            form = await services.forms.create(
                workspace.workspace_id, name="Contact", messages=messages
            )
            await services.recipients.add(form.form_id, OWNER)
            if hook is not None:
                await services.webhooks.add(form.form_id, hook)
        return form.public_form_key

    return anyio.run(setup)


def _submit_many(env: dict[str, str], key: str, fields: list[dict[str, str]]) -> list[str]:
    async def submit() -> list[str]:
        async with open_runtime(Settings.from_env(env)) as runtime:
            intake = Intake(runtime)
            made = []
            for index, each in enumerate(fields):
                result = await intake.submit(key, dict(each), client_ip=f"198.51.100.{index % 250}")
                assert result.ok, result
                made.append(result.submission_id or "")
        return made

    return anyio.run(submit)


def test_a_hundred_submissions_naming_one_victim_send_it_one_confirmation(
    env: dict[str, str], smtp: SmtpServer
) -> None:
    key = _form(
        env,
        MessageChanges(
            autoresponse=True,
            mail_notifications=False,
            templates={
                "autoresponse_subject": "Thanks, {{ fields.name }}",
                "autoresponse_html": "<p>You wrote: {{ fields.message }}</p>",
            },
        ),
    )
    fields = {"email": VICTIM, "name": "Ada\r\nBcc: all@example.com", "message": HOSTILE}
    _submit_many(env, key, [fields] * 100)

    counts = run_cli(env, "relay", "--once")

    assert counts["delivered"] == 1, counts
    (mail,) = smtp.messages
    assert mail.rcpt_tos == (VICTIM,)
    assert mail.message["Auto-Submitted"] == "auto-replied"
    assert "Bcc" not in mail.message
    # The visitor's text never reaches a confirmation's subject.
    assert mail.message["Subject"] == "Thanks,"
    html = mail.message.get_body(("html",))
    assert html is not None
    content = html.get_content()
    assert "<script>" not in content
    assert "<a href" not in content
    assert "&lt;script&gt;" in content
    # The owner asked for no notification mail: none went.
    assert OWNER not in {to for m in smtp.messages for to in m.rcpt_tos}


async def test_the_same_address_gets_a_second_confirmation_only_after_an_hour(
    env: dict[str, str], smtp: SmtpServer
) -> None:
    key = await anyio.to_thread.run_sync(
        lambda: _form(env, MessageChanges(autoresponse=True, mail_notifications=False))
    )
    clock = FakeClock(datetime.now(UTC))
    async with open_runtime(Settings.from_env(env), clock=clock) as runtime:
        intake = Intake(runtime)
        for minutes in (0, 30, 59, 61, 62):
            clock.set(datetime.now(UTC) + timedelta(minutes=minutes))
            assert (await intake.submit(key, {"email": VICTIM})).ok
            await runtime.relay.run_once()

    assert [m.rcpt_tos for m in smtp.messages] == [(VICTIM,), (VICTIM,)]
    (default,) = {str(m.message["Subject"]) for m in smtp.messages}
    assert default == "We received your message"


def test_spam_and_honeypot_submissions_send_no_confirmation(
    env: dict[str, str], smtp: SmtpServer
) -> None:
    key = _form(env, MessageChanges(autoresponse=True, mail_notifications=False))

    async def submit() -> None:
        async with open_runtime(Settings.from_env(env)) as runtime:
            intake = Intake(runtime)
            spam = await intake.submit(key, {"email": VICTIM, "message": SPAM})
            assert spam.ok
            stored = await runtime.services.submissions.get(spam.submission_id or "")
            assert stored.status is SubmissionStatus.SPAM
            trap = await intake.submit(key, {"email": "other@example.com", "_gotcha": "x"})
            assert trap.ok

    anyio.run(submit)

    counts = run_cli(env, "relay", "--once")

    assert counts["delivered"] == 0, counts
    assert smtp.messages == []


def test_a_forward_only_submission_keeps_its_metadata_only_once_delivered(
    env: dict[str, str], smtp: SmtpServer, receiver: Receiver, tmp_path: Path
) -> None:
    key = _form(
        env,
        MessageChanges(forward_only=True, templates={"notification_subject": "New: {{ subject }}"}),
        hook=receiver.url(),
    )
    form_id = run_cli(env, "form", "list")["forms"][0]["form_id"]
    run_cli(env, "form", "update", form_id, "--uploads")
    with TestClient(create_app(Settings.from_env(env))) as client:
        response = client.post(
            f"/f/{key}",
            data={"email": "ada@example.com", "_subject": "Hello", "message": "secret"},
            files={"cv": ("cv.txt", b"my life", "text/plain")},
        )
    assert response.status_code == 201, response.text
    submission_id = response.json()["submission_id"]
    blobs = tmp_path / "blobs"
    assert any(p.is_file() for p in blobs.rglob("*"))
    workspace_id = run_cli(env, "workspace", "list")["workspaces"][0]["workspace_id"]
    before = run_cli(env, "workspace", "show", workspace_id)

    counts = run_cli(env, "relay", "--once")

    assert counts["delivered"] == 2, counts
    (request,) = receiver.requests
    assert b"secret" in request.body
    (mail,) = smtp.messages
    assert mail.message["Subject"] == "New: Hello"
    (kept,) = run_cli(env, "submissions", "list", "--form", form_id)["submissions"]
    assert kept["submission_id"] == submission_id
    assert kept["data"] == {}
    assert kept["files"] == []
    assert kept["status"] == "accepted"
    assert not [p for p in blobs.rglob("*") if p.is_file() and not p.name.startswith(".")]
    after = run_cli(env, "workspace", "show", workspace_id)
    # The month's count stays; the erased files' bytes are given back.
    assert {**after, "storage": None} == {**before, "storage": None}
    assert before["storage"]["used"] == len(b"my life")
    assert after["storage"]["used"] == 0
