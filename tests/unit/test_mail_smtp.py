"""SmtpMailer against a real local SMTP server (aiosmtpd): delivery and its failures."""

from __future__ import annotations

import socket
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Literal

import pytest

from intake.adapters.mail_smtp import SmtpMailer
from intake.domain.model import OutboxEvent, Submission, SubmissionStatus
from intake.domain.notifications import SUBMISSION_ID_HEADER, render_notification
from intake.ports.senders import Mailer, MailRejected, MailUnavailable
from tests.support.smtp_server import SmtpServer

pytestmark = pytest.mark.anyio


def notification(to: str = "owner@example.com") -> EmailMessage:
    submission = Submission(
        submission_id="sub_01hzx5k7w3e8q2r9t6y4u1i0op",
        form_id="frm_contact",
        workspace_id="ws_acme",
        status=SubmissionStatus.ACCEPTED,
        data={"name": "Zoë", "message": "<b>Hello</b> from Köln"},
        created_at=datetime(2026, 3, 1, 12, 30, tzinfo=UTC),
        subject="Größe ändern",
        reply_to="zoe@example.com",
    )
    event = OutboxEvent.for_submission("evt_1", submission)
    return render_notification(
        event.payload,
        form_name="Contact",
        mail_from="intake@forms.example.org",
        to=to,
        base_url=None,
    )


async def test_the_mailer_is_a_mailer(smtp: SmtpServer) -> None:
    mailer: Mailer = SmtpMailer(smtp.url)
    assert isinstance(mailer, SmtpMailer)


async def test_a_notification_arrives_with_its_headers_and_both_parts(smtp: SmtpServer) -> None:
    await SmtpMailer(smtp.url, timeout=5.0).send(notification())

    [mail] = smtp.messages
    assert mail.mail_from == "intake@forms.example.org"
    assert mail.rcpt_tos == ("owner@example.com",)
    message = mail.message
    assert message["Subject"] == "Größe ändern"
    assert message["Reply-To"] == "zoe@example.com"
    assert message[SUBMISSION_ID_HEADER] == "sub_01hzx5k7w3e8q2r9t6y4u1i0op"
    plain = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    assert plain is not None
    assert html is not None
    assert "message: <b>Hello</b> from Köln" in plain.get_content()
    assert "&lt;b&gt;Hello&lt;/b&gt; from Köln" in html.get_content()


async def test_credentials_in_the_url_are_used_to_log_in() -> None:
    with SmtpServer(credentials=("mailer", "p@ss:word")) as smtp:
        url = f"smtp://mailer:p%40ss%3Aword@127.0.0.1:{smtp.port}"

        await SmtpMailer(url, timeout=5.0).send(notification())

        [mail] = smtp.messages
        assert mail.login == "mailer"


async def test_wrong_credentials_are_a_condition_to_retry() -> None:
    with SmtpServer(credentials=("mailer", "right")) as smtp:
        mailer = SmtpMailer(f"smtp://mailer:wrong@127.0.0.1:{smtp.port}", timeout=5.0)

        with pytest.raises(MailUnavailable, match="535") as caught:
            await mailer.send(notification())

        assert "wrong" not in str(caught.value)
        assert smtp.messages == []


@pytest.mark.parametrize("stage", ["rcpt", "data"])
async def test_a_temporary_refusal_is_unavailable(
    smtp: SmtpServer, stage: Literal["rcpt", "data"]
) -> None:
    smtp.reply = "451 4.3.0 Try again later"
    smtp.stage = stage

    with pytest.raises(MailUnavailable, match=r"451 4\.3\.0"):
        await SmtpMailer(smtp.url, timeout=5.0).send(notification())

    assert smtp.messages == []


@pytest.mark.parametrize("stage", ["rcpt", "data"])
async def test_a_permanent_refusal_is_rejected(
    smtp: SmtpServer, stage: Literal["rcpt", "data"]
) -> None:
    smtp.reply = "550 5.1.1 No such user here"
    smtp.stage = stage

    with pytest.raises(MailRejected, match=r"550 5\.1\.1") as caught:
        await SmtpMailer(smtp.url, timeout=5.0).send(notification())

    # Only the codes: the server's own words may quote the address.
    assert "No such user" not in str(caught.value)


async def test_a_closed_port_is_unavailable() -> None:
    mailer = SmtpMailer(f"smtp://127.0.0.1:{closed_port()}", timeout=2.0)

    with pytest.raises(MailUnavailable):
        await mailer.send(notification())


async def test_a_failure_names_its_cause_and_nothing_private() -> None:
    url = f"smtp://mailer:hunter2-pw@127.0.0.1:{closed_port()}"
    mailer = SmtpMailer(url, timeout=2.0)

    with pytest.raises(MailUnavailable) as caught:
        await mailer.send(notification(to="owner-private@example.com"))

    error = str(caught.value)
    assert error == (
        "SMTP failed (SMTPConnectError, caused by ConnectionRefusedError: connection refused)"
    )
    for private in ("hunter2-pw", "mailer", "owner-private", "Zoë", "Hello"):
        assert private not in error


async def test_a_name_that_does_not_resolve_is_said_so() -> None:
    mailer = SmtpMailer("smtp://mail.nowhere.invalid:25", timeout=5.0)

    with pytest.raises(MailUnavailable, match=r"caused by gaierror: ") as caught:
        await mailer.send(notification())

    assert "nowhere" not in str(caught.value)


async def test_a_server_that_never_answers_times_out() -> None:
    # A listening socket nobody accepts from: the connection opens, no greeting comes.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        mailer = SmtpMailer(f"smtp://127.0.0.1:{port}", timeout=0.3)

        with pytest.raises(MailUnavailable, match="timed out"):
            await mailer.send(notification())


async def test_required_starttls_that_the_server_lacks_is_unavailable(smtp: SmtpServer) -> None:
    mailer = SmtpMailer(f"{smtp.url}?starttls=true", timeout=5.0)

    with pytest.raises(MailUnavailable):
        await mailer.send(notification())

    assert smtp.messages == []


async def test_implicit_tls_to_a_plain_server_is_unavailable(smtp: SmtpServer) -> None:
    mailer = SmtpMailer(f"smtps://127.0.0.1:{smtp.port}", timeout=2.0)

    with pytest.raises(MailUnavailable):
        await mailer.send(notification())


# -- the URL -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("smtp://mail.example.com", "SmtpMailer(smtp://mail.example.com:25)"),
        ("smtp://mail.example.com:2525", "SmtpMailer(smtp://mail.example.com:2525)"),
        ("smtps://mail.example.com", "SmtpMailer(smtps://mail.example.com:465)"),
        ("smtp://u:hunter2@mail.example.com:587", "SmtpMailer(smtp://***@mail.example.com:587)"),
    ],
)
async def test_the_url_gives_host_port_and_tls_and_the_password_stays_hidden(
    url: str, shown: str
) -> None:
    assert repr(SmtpMailer(url)) == shown


@pytest.mark.parametrize(
    "url",
    [
        "http://mail.example.com",
        "smtp://",
        "mail.example.com:25",
        "smtp://u:hunter2@mail.example.com:notaport",
        "smtp://mail.example.com?starttls=maybe",
    ],
)
async def test_an_unusable_url_is_refused_without_quoting_it(url: str) -> None:
    with pytest.raises(ValueError, match="INTAKE_SMTP_URL") as caught:
        SmtpMailer(url)

    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan")])
async def test_the_timeout_must_be_a_positive_number(seconds: float) -> None:
    with pytest.raises(ValueError, match="timeout"):
        SmtpMailer("smtp://mail.example.com", timeout=seconds)


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
