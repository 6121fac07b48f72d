"""`intake destination add|list|remove|test`: a form's chat destinations from the command
line, their URL or bot token never printed, in no output and no log line."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.cli.conftest import Cli

SLACK = "https://hooks.slack.com/services/T000/B000/s3cr3tpart"
TOKEN = "123456789:AAH-test-token_abcdefghijklmnopqrstu"


@pytest.fixture
def form(cli: Cli) -> dict[str, str]:
    workspace = cli.json("workspace", "create", "--name", "Acme")
    created = cli.json(
        "form", "create", "--workspace", workspace["workspace_id"], "--name", "Contact"
    )
    return {"form_id": created["form_id"]}


def test_add_list_test_and_remove_without_ever_printing_the_secret(
    cli: Cli, form: dict[str, str], tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")

    slack = cli("destination", "add", "--form", form["form_id"], "--kind", "slack", "--url", SLACK)
    telegram = cli.json(
        "destination", "add", "--form", form["form_id"], "--kind", "telegram",
        "--telegram-token-file", str(token_file), "--telegram-chat-id", "@mychannel",
        "--include-flagged",
    )  # fmt: skip
    listed = cli("destination", "list", "--form", form["form_id"])
    listed_json = cli.json("destination", "list", "--form", form["form_id"])
    tested = cli.json("destination", "test", telegram["destination_id"])
    removed = cli.json("destination", "remove", telegram["destination_id"])
    again = cli("destination", "remove", telegram["destination_id"], "--json")

    assert slack.code == 0
    assert "chat destination chat_" in slack.out
    assert telegram["target"] == "@mychannel"
    assert telegram["include_flagged"] is True
    for shown in (slack.out, slack.err, listed.out, str(listed_json), str(telegram)):
        assert "s3cr3tpart" not in shown
        assert "AAH-test" not in shown
    assert "hooks.slack.com" in listed.out
    assert sorted(d["kind"] for d in listed_json["destinations"]) == ["slack", "telegram"]
    assert (tested["event_type"], tested["kind"], tested["state"]) == (
        "chat.test",
        "chat",
        "pending",
    )
    assert removed == {"destination_id": telegram["destination_id"], "removed": True}
    assert again.code != 0
    kinds = [
        d["kind"]
        for d in cli.json("destination", "list", "--form", form["form_id"])["destinations"]
    ]
    assert kinds == ["slack"]


def test_the_token_may_come_from_standard_input(
    cli: Cli, form: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(TOKEN))

    added = cli.json(
        "destination", "add", "--form", form["form_id"], "--kind", "telegram",
        "--telegram-token-file", "-", "--telegram-chat-id", "-1001",
    )  # fmt: skip

    assert added["kind"] == "telegram"


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (("--kind", "slack", "--url", "http://hooks.slack.com/x"), "https"),
        (("--kind", "discord", "--url", "https://127.0.0.1/x"), "not a public address"),
        (("--kind", "teams"), "url is required"),
        (("--kind", "telegram", "--telegram-chat-id", "1"), "bot token"),
        (("--kind", "telegram", "--url", SLACK), "not a url"),
    ],
)
def test_add_refuses_what_cannot_be_posted_to(
    cli: Cli, form: dict[str, str], argv: tuple[str, ...], reason: str
) -> None:
    result = cli("destination", "add", "--form", form["form_id"], *argv, "--json")

    assert result.code == 1
    assert reason in result.document["error"]
    assert "s3cr3tpart" not in result.out
    assert cli.json("destination", "list", "--form", form["form_id"])["destinations"] == []


def test_an_unreadable_token_file_is_refused(cli: Cli, form: dict[str, str]) -> None:
    result = cli(
        "destination", "add", "--form", form["form_id"], "--kind", "telegram",
        "--telegram-token-file", "/nonexistent/token", "--telegram-chat-id", "1", "--json",
    )  # fmt: skip

    assert result.code == 1
    assert "cannot read the token file" in result.document["error"]
