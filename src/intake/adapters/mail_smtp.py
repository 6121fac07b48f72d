"""The mailer that hands notification mail to an SMTP server (INTAKE_SMTP_URL).

URL forms: `smtp://host:port` (STARTTLS when the server offers it), `smtp://host?
starttls=true` (STARTTLS required), `smtps://host:port` (TLS from the first byte), each
optionally with `user:password@` for AUTH; user and password are percent-decoded.

Nothing here logs, and no error message carries the password, the message or the
server's free text: only the reply code and its enhanced status code (`5.1.1`).
"""

from __future__ import annotations

import math
import os
import re
import socket
import ssl
from email.message import EmailMessage
from urllib.parse import SplitResult, parse_qs, unquote, urlsplit

import aiosmtplib
import anyio

from intake.ports.senders import MailRejected, MailUnavailable

DEFAULT_TIMEOUT = 15.0

_DEFAULT_PORTS = {"smtp": 25, "smtps": 465}
_ENHANCED_STATUS = re.compile(r"\s*([245]\.\d{1,3}\.\d{1,3})\b")


class SmtpMailer:
    """Implements Mailer: one connection per message, closed after it."""

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        if not (math.isfinite(timeout) and timeout > 0):
            raise ValueError("timeout must be a positive number of seconds")
        parts = _split(url)
        self._hostname = parts.hostname or ""
        self._use_tls = parts.scheme == "smtps"
        self._port = _port(parts) or _DEFAULT_PORTS[parts.scheme]
        self._start_tls = _start_tls(parts)
        self._username = unquote(parts.username) if parts.username is not None else None
        self._password = unquote(parts.password) if parts.password is not None else None
        self._timeout = timeout

    def __repr__(self) -> str:
        # The password stays out of reprs, and with it out of logs and tracebacks.
        scheme = "smtps" if self._use_tls else "smtp"
        user = "***@" if self._username is not None else ""
        return f"SmtpMailer({scheme}://{user}{self._hostname}:{self._port})"

    async def send(self, message: EmailMessage) -> None:
        # aiosmtplib's timeout limits each command; fail_after bounds the whole
        # exchange, so a server answering slowly line by line cannot hold the relay.
        try:
            with anyio.fail_after(self._timeout):
                await aiosmtplib.send(
                    message,
                    hostname=self._hostname,
                    port=self._port,
                    username=self._username,
                    password=self._password,
                    use_tls=self._use_tls,
                    start_tls=self._start_tls,
                    timeout=self._timeout,
                )
        # `from None` throughout: aiosmtplib's exceptions quote the server's replies,
        # which may echo addresses; the summary here is what is fit to log.
        except aiosmtplib.SMTPRecipientsRefused as exc:
            codes = [refused.code for refused in exc.recipients]
            summary = ", ".join(_reply(refused) for refused in exc.recipients)
            if codes and all(_permanent(code) for code in codes):
                raise MailRejected(f"recipient refused: {summary}") from None
            raise MailUnavailable(f"recipient refused for now: {summary}") from None
        except (
            aiosmtplib.SMTPConnectResponseError,
            aiosmtplib.SMTPHeloError,
            aiosmtplib.SMTPAuthenticationError,
            aiosmtplib.SMTPSenderRefused,
        ) as exc:
            # Not about this message: the server's greeting, our credentials or our
            # INTAKE_MAIL_FROM, which can be fixed while the relay keeps retrying, so
            # the mail is not given up for them.
            raise MailUnavailable(f"server refused the session: {_reply(exc)}") from None
        except aiosmtplib.SMTPResponseException as exc:
            if _permanent(exc.code):
                raise MailRejected(f"message refused: {_reply(exc)}") from None
            raise MailUnavailable(f"message refused for now: {_reply(exc)}") from None
        except aiosmtplib.SMTPTimeoutError:
            raise MailUnavailable("timed out") from None
        except TimeoutError:
            raise MailUnavailable("timed out") from None
        except (aiosmtplib.SMTPException, OSError) as exc:
            # Connection refused or dropped, TLS failure, AUTH or STARTTLS missing.
            raise MailUnavailable(f"SMTP failed ({_described(exc)})") from None
        except ValueError:
            # No From or To to send with: retrying cannot make this message sendable.
            raise MailRejected("message has no sender or recipient") from None


def _split(url: str) -> SplitResult:
    parts = urlsplit(url.strip())
    if parts.scheme not in _DEFAULT_PORTS:
        raise ValueError("INTAKE_SMTP_URL must start with smtp:// or smtps://")
    if not parts.hostname:
        raise ValueError("INTAKE_SMTP_URL has no host")
    return parts


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError:
        # urllib's message quotes the port text; the URL may hold a password nearby.
        raise ValueError("INTAKE_SMTP_URL has an invalid port") from None


def _start_tls(parts: SplitResult) -> bool | None:
    """True: STARTTLS required; False: never; None: when the server offers it."""
    if parts.scheme == "smtps":
        return False  # already TLS
    values = parse_qs(parts.query).get("starttls")
    if not values:
        return None
    value = values[-1].strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError("INTAKE_SMTP_URL: starttls must be true or false")


def _described(exc: BaseException) -> str:
    """The exception's class and, when it wraps one, its cause's class with a description
    made from codes (errno, TLS reason), never from messages, which quote the host, the
    server's replies or the addresses of the mail."""
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if cause is None:  # a socket error of its own is described as a cause is
        return _cause_text(exc) if isinstance(exc, OSError) else type(exc).__name__
    return f"{type(exc).__name__}, caused by {_cause_text(cause)}"


def _cause_text(cause: BaseException) -> str:
    name = type(cause).__name__
    if isinstance(cause, ssl.SSLError) and cause.reason:
        return f"{name}: {cause.reason}"  # e.g. CERTIFICATE_VERIFY_FAILED
    if isinstance(cause, socket.gaierror) and isinstance(cause.errno, int):
        return f"{name}: {_GAI_ERRORS.get(cause.errno, 'lookup failed')}"
    if isinstance(cause, OSError) and isinstance(cause.errno, int) and cause.errno > 0:
        return f"{name}: {os.strerror(cause.errno).lower()}"
    return name


# getaddrinfo's failures, said without the name looked up.
_GAI_ERRORS = {
    socket.EAI_NONAME: "no such name",
    socket.EAI_AGAIN: "temporary failure in name resolution",
    socket.EAI_FAIL: "name resolution failed",
}


def _permanent(code: int) -> bool:
    return 500 <= code < 600


def _reply(exc: aiosmtplib.SMTPResponseException) -> str:
    enhanced = _ENHANCED_STATUS.match(exc.message or "")
    return f"{exc.code} {enhanced.group(1)}" if enhanced else str(exc.code)
