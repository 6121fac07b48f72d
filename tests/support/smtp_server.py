"""A real local SMTP server (aiosmtpd) on a free 127.0.0.1 port, collecting mail.

Switches, settable while it runs: `reply` (an SMTP reply such as `451 4.3.0 Try again
later` or `550 5.1.1 No such user`, sent instead of accepting) and `stage` (`"rcpt"` or
`"data"`: which command gets that reply). `credentials` at construction turns on AUTH
(PLAIN and LOGIN, over plain text: this is a test server on loopback).
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import threading
import warnings
from email.message import EmailMessage
from typing import Any, Literal, Self

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session
from attrs import frozen

from tests.support.processes import Background


@frozen
class ReceivedMail:
    mail_from: str
    rcpt_tos: tuple[str, ...]
    message: EmailMessage
    raw: bytes
    login: str | None  # the user name that authenticated, if any


class _Controller(Controller):
    """Listens on port 0 and learns the port the system picked.

    aiosmtpd's Controller connects to `self.port` once started, to make the server
    build its protocol; with port 0 that is no address, so the real one is read from
    the listening socket first."""

    def _trigger_server(self) -> None:
        server = self.server
        assert isinstance(server, asyncio.Server)
        self.port = server.sockets[0].getsockname()[1]
        super()._trigger_server()  # type: ignore[no-untyped-call]  # aiosmtpd leaves it untyped


class SmtpServer(Background):
    def __init__(self, credentials: tuple[str, str] | None = None) -> None:
        self.reply: str | None = None
        self.stage: Literal["rcpt", "data"] = "rcpt"
        self._credentials = credentials
        self._messages: list[ReceivedMail] = []
        self._lock = threading.Lock()
        self._controller: _Controller | None = None

    def start(self) -> Self:
        if self._controller is not None:
            raise RuntimeError("SMTP server already started")
        kwargs: dict[str, Any] = {}
        if self._credentials is not None:
            kwargs.update(
                authenticator=self._authenticate,
                auth_require_tls=False,
                auth_exclude_mechanism=["CRAM-MD5"],
            )
        controller = _Controller(_Handler(self), hostname="127.0.0.1", port=0, **kwargs)
        with warnings.catch_warnings():
            # AUTH without TLS makes aiosmtpd warn, rightly, except on a loopback test.
            warnings.filterwarnings("ignore", "Requiring AUTH while not requiring TLS")
            controller.start()
        self._controller = controller
        return self

    def stop(self) -> None:
        controller = self._controller
        if controller is None:
            return
        controller.stop()
        self._controller = None

    @property
    def port(self) -> int:
        if self._controller is None:
            raise RuntimeError("SMTP server not started")
        return int(self._controller.port)

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    @property
    def messages(self) -> list[ReceivedMail]:
        with self._lock:
            return list(self._messages)

    def _keep(self, mail: ReceivedMail) -> None:
        with self._lock:
            self._messages.append(mail)

    def _authenticate(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        mechanism: str,
        auth_data: object,
    ) -> AuthResult:
        if isinstance(auth_data, LoginPassword) and self._credentials is not None:
            user, password = self._credentials
            if auth_data.login == user.encode() and auth_data.password == password.encode():
                return AuthResult(success=True, auth_data=user)
        return AuthResult(success=False, handled=False)


class _Handler:
    """aiosmtpd calls these hooks by name, with the session's state."""

    def __init__(self, server: SmtpServer) -> None:
        self._server = server

    async def handle_RCPT(  # noqa: N802 - the name aiosmtpd looks up
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if self._server.reply is not None and self._server.stage == "rcpt":
            return self._server.reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(  # noqa: N802 - the name aiosmtpd looks up
        self, server: SMTP, session: Session, envelope: Envelope
    ) -> str:
        if self._server.reply is not None and self._server.stage == "data":
            return self._server.reply
        raw = envelope.original_content or b""
        message = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        login = session.auth_data if isinstance(session.auth_data, str) else None
        self._server._keep(
            ReceivedMail(
                mail_from=envelope.mail_from or "",
                rcpt_tos=tuple(envelope.rcpt_tos),
                message=message,
                raw=raw,
                login=login,
            )
        )
        return "250 Message accepted for delivery"
