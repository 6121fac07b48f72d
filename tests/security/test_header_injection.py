"""Header injection through what a sender types: CR, LF and other line-breaking
characters in `_subject`, `_replyto`, `email`, field names and values.

None of it reaches a header: not the HTTP answer's (Location above all), not the webhook
request's, not the notification mail's. The mail and the webhook are the real ones: a
submission made over HTTP is delivered by the relay to a local webhook receiver and a
local SMTP server. What was typed is kept intact in the stored data all the same.
"""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import anyio
import pytest
from standardwebhooks import Webhook
from starlette.testclient import TestClient

from intake.config import Settings
from intake.domain.model import Submission
from intake.entrypoints.http.app import create_app
from intake.library_runtime import open_runtime
from tests.http.conftest import BROWSER_ACCEPT, Seeded, assert_error
from tests.support.receiver import ReceivedRequest, Receiver
from tests.support.smtp_server import ReceivedMail, SmtpServer

OWNER = "owner@example.com"
MAIL_FROM = "intake@example.com"
VICTIM = "victim@evil.example"
MARK = "injected"

# Every way of ending a header line a parser or a mail client might honour.
BREAKS = ["\r\n", "\n", "\r", "\r\n\r\n", "\x0b", "\x0c", "\x85", "\u2028", "\u2029", "\x00"]
NO_NUL = [b for b in BREAKS if b != "\x00"]  # NUL is malformed_request before anything


def _line(prefix: str, sep: str) -> str:
    return f"{prefix}{sep}Bcc: {VICTIM}{sep}X-{MARK}: yes"


def _payload() -> dict[str, Any]:
    subject = "Hello" + "".join(f"{sep}X-{MARK}-{i}: yes" for i, sep in enumerate(NO_NUL))
    return {
        "_subject": subject,
        "email": "ada@example.com",
        "message": "line one\r\n\r\nX-Body-Header: no\r\n.\r\nMAIL FROM:<evil@evil.example>\r\n",
        f"name\r\nX-{MARK}-name: yes": "value",
        "note": _line("a note", "\r\n"),
        "tags": ["one\r\nX-Tag: no", "two"],
    }


# -- the answer's own headers -------------------------------------------------------------


ANSWER_HEADERS = {
    "location", "content-type", "content-length", "cache-control", "x-request-id", "vary",
    "access-control-allow-origin", "access-control-expose-headers", "idempotent-replayed",
    "x-content-type-options", "connection",
}  # fmt: skip


@pytest.mark.parametrize("sep", NO_NUL, ids=repr)
def test_a_next_with_a_line_break_adds_no_header_to_the_redirect(seeded: Seeded, sep: str) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key,
        origin="https://shop.example",
        headers={"accept": BROWSER_ACCEPT},
        data={"name": "Ada", "_next": f"https://shop.example/done{sep}Set-Cookie: {MARK}=1"},
    )

    assert response.status_code == 303
    assert set(response.headers) <= ANSWER_HEADERS
    assert response.headers["location"] == f"/f/{seeded.form.public_form_key}/thanks"
    assert MARK not in str(response.headers.raw)
    assert seeded.svc.stored() == (1, 1)


def test_a_percent_encoded_line_break_in_next_stays_encoded_in_the_location(
    seeded: Seeded,
) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key,
        origin="https://shop.example",
        headers={"accept": BROWSER_ACCEPT},
        data={"name": "Ada", "_next": f"https://shop.example/a%0D%0ASet-Cookie:%20{MARK}=1"},
    )

    assert response.status_code == 303
    assert "set-cookie" not in response.headers
    assert response.headers["location"] == f"https://shop.example/a%0D%0ASet-Cookie:%20{MARK}=1"


def test_fields_with_line_breaks_add_no_header_to_the_answer(seeded: Seeded) -> None:
    response = seeded.svc.public(seeded.form.public_form_key, json=_payload())

    assert response.status_code == 201, response.text
    assert set(response.headers) <= ANSWER_HEADERS
    assert MARK not in str(response.headers.raw)


@pytest.mark.parametrize("sep", BREAKS, ids=repr)
def test_a_reply_to_with_a_line_break_is_refused_and_nothing_is_stored(
    seeded: Seeded, sep: str
) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key,
        json={"name": "Ada", "_replyto": _line("ada@example.com", sep)},
    )

    expected = "malformed_request" if sep == "\x00" else "validation_failed"
    body = assert_error(response, expected)
    if expected == "validation_failed":
        assert list(body["error"]["fields"]) == ["_replyto"]
    assert seeded.svc.stored() == (0, 0)


@pytest.mark.parametrize("sep", BREAKS, ids=repr)
def test_an_email_field_with_a_line_break_is_refused_and_nothing_is_stored(
    seeded: Seeded, sep: str
) -> None:
    response = seeded.svc.public(
        seeded.form.public_form_key, json={"email": _line("ada@example.com", sep)}
    )

    expected = "malformed_request" if sep == "\x00" else "validation_failed"
    body = assert_error(response, expected)
    if expected == "validation_failed":
        assert list(body["error"]["fields"]) == ["email"]
    assert seeded.svc.stored() == (0, 0)


def test_line_breaks_in_fields_are_stored_as_they_were_sent(seeded: Seeded) -> None:
    payload = _payload()
    response = seeded.svc.public(seeded.form.public_form_key, json=payload)

    stored = seeded.svc.submission(response.json()["submission_id"])
    assert stored.subject == payload["_subject"]
    assert stored.reply_to == "ada@example.com"
    assert dict(stored.data) == {k: v for k, v in payload.items() if not k.startswith("_")}


# -- the webhook request and the notification mail, delivered for real -----------------------


class Delivered:
    def __init__(
        self, submission: Submission, secret: str, hook: ReceivedRequest, mail: ReceivedMail
    ) -> None:
        self.submission = submission
        self.secret = secret
        self.hook = hook
        self.mail = mail


def _deliver(
    tmp_path: Path, receiver: Receiver, smtp: SmtpServer, payload: dict[str, Any], form_name: str
) -> Delivered:
    """A submission over HTTP, then one relay round to the receiver and the mailbox."""
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'intake.db'}",
        smtp_url=smtp.url,
        mail_from=MAIL_FROM,
        webhook_allow_private=True,  # the receiver is plain http on 127.0.0.1
    )

    async def setup() -> tuple[str, str]:
        async with open_runtime(settings) as runtime:
            await runtime.store.migrate()
            workspace = await runtime.services.workspaces.create("Acme")
            form = await runtime.services.forms.create(workspace.workspace_id, name=form_name)
            hook = await runtime.services.webhooks.add(form.form_id, receiver.url())
            await runtime.services.recipients.add(form.form_id, OWNER)
        return form.public_form_key, hook.secret

    key, secret = anyio.run(setup)
    with TestClient(create_app(settings)) as client:
        response = client.post(f"/f/{key}", json=payload)
    assert response.status_code == 201, response.text

    async def relay() -> Submission:
        async with open_runtime(settings) as runtime:
            done = await runtime.relay.run_once()
            assert (done.delivered, done.failed, done.dead) == (2, 0, 0), done
            stored = await runtime.store.submissions.get(response.json()["submission_id"])
        assert stored is not None
        return stored

    submission = anyio.run(relay)
    (hook,) = receiver.requests
    (mail,) = smtp.messages  # one message: nothing in a value ended it early
    return Delivered(submission, secret, hook, mail)


# What the relay itself sends; the receiver hears these names and no other.
WEBHOOK_HEADERS = {
    "host", "accept", "accept-encoding", "connection", "user-agent", "content-length",
    "content-type", "webhook-id", "webhook-timestamp", "webhook-signature",
}  # fmt: skip
MAIL_HEADERS = {
    "subject", "from", "to", "reply-to", "date", "message-id", "x-intake-submission-id",
    "auto-submitted", "mime-version", "content-type",
}  # fmt: skip
PART_HEADERS = {"content-type", "content-transfer-encoding", "mime-version"}


def _header_names(raw: bytes) -> list[str]:
    """The names of a raw message's own header block, as a mail server reads them."""
    head = raw.replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    names = []
    for line in head.split(b"\n"):
        if line[:1] in (b" ", b"\t"):
            continue  # a folded continuation of the header above
        names.append(line.split(b":", 1)[0].decode("ascii").lower())
    return names


@pytest.mark.slow
def test_line_breaks_in_fields_reach_no_webhook_or_mail_header_and_arrive_intact(
    tmp_path: Path, receiver: Receiver, smtp: SmtpServer
) -> None:
    payload = _payload()

    delivered = _deliver(tmp_path, receiver, smtp, payload, form_name="Contact")

    # The webhook: the relay's headers only, a valid signature, the values as typed.
    hook = delivered.hook
    assert set(hook.headers) <= WEBHOOK_HEADERS
    assert MARK not in repr(sorted(hook.headers.items())).lower()
    event = Webhook(delivered.secret).verify(hook.body, dict(hook.headers))
    assert event["subject"] == payload["_subject"]
    assert event["data"] == {k: v for k, v in payload.items() if not k.startswith("_")}

    # The mail: to the owner only, its own headers once each, the subject on one line.
    mail = delivered.mail
    assert mail.rcpt_tos == (OWNER,)
    assert VICTIM not in mail.rcpt_tos
    names = _header_names(mail.raw)
    assert set(names) == MAIL_HEADERS
    assert len(names) == len(set(names))
    message = mail.message
    subject = message["Subject"]
    assert subject.startswith("Hello X-injected-0: yes")
    assert not any(ch in subject for ch in "".join(BREAKS))
    assert str(message["Reply-To"]) == "ada@example.com"
    for part in message.walk():
        if part is not message:
            assert {k.lower() for k in part} <= PART_HEADERS
    text = message.get_body(("plain",))
    assert isinstance(text, EmailMessage)
    lines = text.get_content().splitlines()
    # A value's own lines are indented under its field: none passes for a header or a
    # field of its own, and the SMTP end-of-data line arrives as text.
    assert not any(line.startswith(("X-", "Bcc:", "MAIL FROM")) for line in lines)
    assert "  ." in lines

    # Stored as sent.
    assert delivered.submission.subject == payload["_subject"]
    assert dict(delivered.submission.data) == event["data"]


@pytest.mark.slow
def test_a_form_name_with_line_breaks_cannot_add_a_header_to_the_default_subject(
    tmp_path: Path, receiver: Receiver, smtp: SmtpServer
) -> None:
    delivered = _deliver(
        tmp_path,
        receiver,
        smtp,
        {"message": "Hello"},
        form_name=_line("Contact", "\r\n"),
    )

    names = _header_names(delivered.mail.raw)
    assert set(names) == MAIL_HEADERS - {"reply-to"}
    assert delivered.mail.rcpt_tos == (OWNER,)
    parsed = email.message_from_bytes(delivered.mail.raw, policy=email.policy.default)
    assert "\n" not in str(parsed["Subject"])
    assert str(parsed["Subject"]).startswith("New submission to Contact Bcc:")
