"""Delivery end to end, on the embedded SQLite file and on PostgreSQL (a fresh database):
a submission made over HTTP reaches a real local webhook receiver, verified with the
Standard Webhooks reference library, and a real local SMTP server, through `intake relay`
(the installed command, where its process is what is tested: its signals). Retries and
leases need time to pass, so those cases run the relay in-process on the same database
with a clock the test moves.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from standardwebhooks import Webhook
from starlette.testclient import TestClient

from intake.adapters.memory import FakeClock
from intake.config import Settings
from intake.domain.deliveries import RETRY_SCHEDULE
from intake.entrypoints.http.app import create_app
from intake.entrypoints.library import Intake
from intake.library_runtime import open_runtime
from intake.service.relay import RelayRound
from tests.conftest import new_postgres_database
from tests.support.processes import (
    IntakeProcess,
    clean_env,
    console_script,
    run_cli,
    wait_for,
)
from tests.support.receiver import ReceivedRequest, Receiver
from tests.support.smtp_server import SmtpServer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

DEADLINE = 60.0  # seconds for anything a process is waited for
LEASE = timedelta(minutes=2)  # the relay's default lease
MAIL_TO = "owner@example.com"


def _postgres_database() -> Iterator[str]:
    with new_postgres_database(migrated=True) as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'intake.db'}"
    else:
        yield from _postgres_database()


@pytest.fixture
def env(database: str, smtp: SmtpServer) -> dict[str, str]:
    return clean_env(
        INTAKE_DATABASE_URL=database,
        # The receiver is plain http on 127.0.0.1.
        INTAKE_WEBHOOK_ALLOW_PRIVATE="true",
        INTAKE_SMTP_URL=smtp.url,
        INTAKE_MAIL_FROM="intake@example.com",
    )


@pytest.fixture
def form(env: dict[str, str], receiver: Receiver) -> dict[str, str]:
    """A form with the receiver as its webhook and MAIL_TO as its recipient. Set up
    in-process (tests/cli covers the commands; five more processes would only add
    seconds); the relay runs as `intake relay`."""

    async def setup() -> dict[str, str]:
        async with open_runtime(Settings.from_env(env)) as runtime:
            await runtime.store.migrate()
            services = runtime.services
            workspace = await services.workspaces.create("E2E")
            form = await services.forms.create(workspace.workspace_id)
            hook = await services.webhooks.add(form.form_id, receiver.url())
            await services.recipients.add(form.form_id, MAIL_TO)
        return {
            "form_id": form.form_id,
            "public_form_key": form.public_form_key,
            "secret": hook.secret,
        }

    return anyio.run(setup)


def _submit(env: Mapping[str, str], public_form_key: str) -> str:
    """One submission over HTTP, to the app as `intake serve` builds it."""
    with TestClient(create_app(Settings.from_env(env))) as client:
        response = client.post(
            f"/f/{public_form_key}", json={"email": "ada@example.com", "message": "Hello"}
        )
    assert response.status_code == 201, response.text
    submission_id: str = response.json()["submission_id"]
    return submission_id


def _verify(secret: str, request: ReceivedRequest) -> dict[str, Any]:
    payload = Webhook(secret).verify(request.body, dict(request.headers))
    assert isinstance(payload, dict)
    return payload


def test_a_submission_reaches_the_webhook_and_the_mailbox_through_relay_once(
    env: dict[str, str], form: dict[str, str], receiver: Receiver, smtp: SmtpServer
) -> None:
    submission_id = _submit(env, form["public_form_key"])

    counts = run_cli(env, "relay", "--once")

    assert counts == {"delivered": 2, "failed": 0, "dead": 0, "fanned_out": 1}
    (request,) = receiver.requests
    payload = _verify(form["secret"], request)
    assert payload["submission_id"] == submission_id
    assert payload["form_id"] == form["form_id"]
    assert payload["data"] == {"email": "ada@example.com", "message": "Hello"}
    (mail,) = smtp.messages
    assert mail.rcpt_tos == (MAIL_TO,)
    assert mail.mail_from == "intake@example.com"
    assert mail.message["X-Intake-Submission-Id"] == submission_id
    deliveries = run_cli(env, "outbox", "list")["deliveries"]
    assert {d["state"] for d in deliveries} == {"delivered"}
    assert {d["event_id"] for d in deliveries} == {request.headers["webhook-id"]}


async def test_a_receiver_failing_twice_gets_the_event_on_the_third_round_with_the_same_id(
    env: dict[str, str], form: dict[str, str], receiver: Receiver, smtp: SmtpServer
) -> None:
    receiver.statuses = [500, 503]
    clock = FakeClock(datetime.now(UTC))
    async with open_runtime(Settings.from_env(env), clock=clock) as runtime:
        result = await Intake(runtime).submit(form["public_form_key"], {"email": "a@example.com"})
        assert result.ok, result
        rounds = [await runtime.relay.run_once()]
        for delay in RETRY_SCHEDULE[1:3]:
            # The production relay stretches each delay by up to a fifth, at random.
            clock.advance(delay.total_seconds() * 1.2)
            rounds.append(await runtime.relay.run_once())

    assert rounds == [
        RelayRound(fanned_out=1, delivered=1, failed=1),  # the mail, and the first 500
        RelayRound(failed=1),
        RelayRound(delivered=1),
    ]
    requests = receiver.requests
    assert len(requests) == 3
    assert len({r.headers["webhook-id"] for r in requests}) == 1
    # Each send is signed afresh with its own timestamp, minutes apart on the moved clock;
    # the reference library's verify also wants them near the real time, so it checks
    # the signature against the expected one.
    for request in requests:
        moment = datetime.fromtimestamp(int(request.headers["webhook-timestamp"]), UTC)
        expected = Webhook(form["secret"]).sign(
            request.headers["webhook-id"], moment, request.body.decode()
        )
        assert request.headers["webhook-signature"] == expected
    assert [m.message["X-Intake-Submission-Id"] for m in smtp.messages] == [result.submission_id]


def _relay_killed_mid_send(env: Mapping[str, str], receiver: Receiver, log: Path) -> None:
    """`intake relay --once`, SIGKILLed while the receiver holds its webhook request."""
    receiver.delay = 60.0
    relay = IntakeProcess(env, log, ["relay", "--once"]).start()
    try:
        wait_for(lambda: len(receiver.requests) == 1, DEADLINE, "webhook request")
    finally:
        relay.kill()
    receiver.delay = 0.0


async def test_a_relay_killed_mid_delivery_is_redelivered_with_the_same_id_after_the_lease(
    env: dict[str, str], form: dict[str, str], receiver: Receiver, tmp_path: Path
) -> None:
    _submit(env, form["public_form_key"])
    _relay_killed_mid_send(env, receiver, tmp_path / "relay.log")

    within_lease = run_cli(env, "relay", "--once")
    clock = FakeClock(datetime.now(UTC) + LEASE + timedelta(seconds=1))
    async with open_runtime(Settings.from_env(env), clock=clock) as runtime:
        after_lease = await runtime.relay.run_once()

    assert within_lease == {"delivered": 0, "failed": 0, "dead": 0, "fanned_out": 0}
    # The webhook, and the mail too when the kill came before its result was recorded.
    assert after_lease.delivered in (1, 2)
    assert (after_lease.failed, after_lease.dead) == (0, 0)
    first, second = receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert _verify(form["secret"], first) == _verify(form["secret"], second)
    assert {d["state"] for d in run_cli(env, "outbox", "list")["deliveries"]} == {"delivered"}


def _start_relay(env: Mapping[str, str], tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    out = tmp_path / "relay.out"
    with out.open("w") as stdout, (tmp_path / "relay.err").open("w") as stderr:
        process = subprocess.Popen(
            [console_script(), "relay", "--json"],
            env=dict(env), stdout=stdout, stderr=stderr, text=True,
        )  # fmt: skip
    return process, out


def _exit_code(process: subprocess.Popen[str]) -> int:
    try:
        return process.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail("the relay did not stop")


def test_the_relay_delivers_new_submissions_and_stops_gracefully_on_sigterm(
    env: dict[str, str],
    form: dict[str, str],
    receiver: Receiver,
    smtp: SmtpServer,
    tmp_path: Path,
) -> None:
    receiver.delay = 2.0  # a send in flight when the signal comes
    process, out = _start_relay(env, tmp_path)
    try:
        submission_id = _submit(env, form["public_form_key"])
        wait_for(lambda: len(receiver.requests) == 1, DEADLINE, "webhook request")
        process.send_signal(signal.SIGTERM)
        code = _exit_code(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    errors = (tmp_path / "relay.err").read_text()
    assert code == 0, errors
    assert json.loads(out.read_text()) == {
        "delivered": 2,
        "failed": 0,
        "dead": 0,
        "fanned_out": 1,
    }, "the send in flight finished and was recorded"
    assert _verify(form["secret"], receiver.requests[0])["submission_id"] == submission_id
    assert len(smtp.messages) == 1
    assert {d["state"] for d in run_cli(env, "outbox", "list")["deliveries"]} == {"delivered"}
    assert "relay stopping after the sends in flight" in errors


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_the_relay_starts_stops_it_cleanly_before_any_send(
    env: dict[str, str],
    form: dict[str, str],
    receiver: Receiver,
    tmp_path: Path,
    stop_signal: signal.Signals,
) -> None:
    _submit(env, form["public_form_key"])
    process, out = _start_relay(env, tmp_path)
    errors = tmp_path / "relay.err"
    try:
        # Its first line (the store it uses) comes before it loads its senders and opens
        # the store, long before it watches for signals itself.
        wait_for(lambda: errors.read_text() != "", DEADLINE, "the relay's first log line")
        process.send_signal(stop_signal)
        code = _exit_code(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    assert code == 0, errors.read_text()
    assert json.loads(out.read_text()) == {"delivered": 0, "failed": 0, "dead": 0, "fanned_out": 0}
    assert receiver.requests == []
    assert "relay stopped" in errors.read_text()


def test_a_second_signal_stops_the_relay_at_once(
    env: dict[str, str], form: dict[str, str], receiver: Receiver, tmp_path: Path
) -> None:
    receiver.delay = 60.0
    process, _ = _start_relay(env, tmp_path)
    try:
        _submit(env, form["public_form_key"])
        wait_for(lambda: len(receiver.requests) == 1, DEADLINE, "webhook request")
        process.send_signal(signal.SIGINT)
        time.sleep(0.2)  # two separate signals, as two Ctrl-C presses are
        process.send_signal(signal.SIGINT)
        code = _exit_code(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    assert code == 130
    (pending,) = [d for d in run_cli(env, "outbox", "list")["deliveries"] if d["kind"] == "webhook"]
    assert pending["state"] == "pending", "left to its lease, to be sent again"
