"""Akismet through the compositions of `intake serve`, the management commands and
`intake relay`, configured by the environment alone: a public submission checked, a
command's triage queued as a report, and `intake relay --once` sending it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from intake.entrypoints.http import create_app
from tests.cli.conftest import Cli, submit
from tests.support.fake_akismet import KEY, SITE_URL, SPAM_EMAIL, FakeAkismet


@pytest.fixture
def akismet(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAkismet]:
    with FakeAkismet() as fake:
        monkeypatch.setenv("INTAKE_AKISMET_API_KEY", KEY)
        monkeypatch.setenv("INTAKE_AKISMET_SITE_URL", SITE_URL)
        monkeypatch.setenv("INTAKE_AKISMET_API_URL", fake.base_url)
        yield fake


def test_a_commands_triage_is_reported_by_intake_relay(cli: Cli, akismet: FakeAkismet) -> None:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    form = cli.json("form", "create", "--workspace", workspace_id)
    with TestClient(create_app()) as http:
        ham = submit(http, form["public_form_key"], {"email": "a@example.com", "m": "Hello"})
        spam = submit(http, form["public_form_key"], {"email": SPAM_EMAIL, "m": "Cheap"})
    assert len(akismet.received("comment-check")) == 2

    assert cli.json("submissions", "mark-spam", ham)["status"] == "spam"
    assert cli.json("submissions", "release", spam)["status"] == "accepted"
    assert cli("relay", "--once").code == 0

    [told_spam] = akismet.received("submit-spam")
    [told_ham] = akismet.received("submit-ham")
    assert told_spam.form["comment_author_email"] == "a@example.com"
    assert told_ham.form["comment_author_email"] == SPAM_EMAIL
    delivered = cli.json("outbox", "list")["deliveries"]
    reports = [d for d in delivered if d["kind"] == "akismet"]
    assert [d["state"] for d in reports] == ["delivered", "delivered"]
