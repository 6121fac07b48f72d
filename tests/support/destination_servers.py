"""The local destinations deliveries go to, as fixtures every test may ask for: a webhook
receiver (plain http on 127.0.0.1), an SMTP server, and a fake of each chat app's API,
each running for one test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.chat_servers import ChatApps
from tests.support.receiver import Receiver
from tests.support.smtp_server import SmtpServer


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    with SmtpServer() as running:
        yield running


@pytest.fixture
def chat_apps() -> Iterator[ChatApps]:
    with ChatApps() as running:
        yield running
