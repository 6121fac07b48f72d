"""`intake spam train|stats`: an owner's history from intake's CSV and JSON Lines exports
and a Formspree CSV export, refused whole when a file cannot be read; what the filter
knows; and `intake purge` applying the rule for untouched submissions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from intake.entrypoints.cli import spam
from tests.cli.conftest import Cli

SAMPLES = Path(__file__).parents[1] / "unit" / "exports"


@pytest.fixture
def workspace_id(cli: Cli) -> str:
    made = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    assert isinstance(made, str)
    return made


def _train(cli: Cli, workspace_id: str, *files: str) -> dict[str, object]:
    return cli.json("spam", "train", "--workspace", workspace_id, *files)


@pytest.mark.parametrize(
    ("sample", "messages"), [("intake.csv", 2), ("intake.jsonl", 2), ("formspree.csv", 2)]
)
def test_train_reads_each_export(cli: Cli, workspace_id: str, sample: str, messages: int) -> None:
    document = _train(cli, workspace_id, "--spam", str(SAMPLES / sample))

    assert document["taught"] == {"spam": messages, "ham": 0}
    assert document["spam_messages"] == messages
    assert document["ham_messages"] == 0
    assert isinstance(document["tokens"], int)
    assert document["tokens"] > 0


def test_train_takes_both_kinds_and_stats_shows_them(cli: Cli, workspace_id: str) -> None:
    _train(
        cli,
        workspace_id,
        "--spam",
        str(SAMPLES / "intake.csv"),
        "--ham",
        str(SAMPLES / "formspree.csv"),
    )

    stats = cli.json("spam", "stats", "--workspace", workspace_id)
    text = cli("spam", "stats", "--workspace", workspace_id)

    assert stats["workspace_id"] == workspace_id
    assert (stats["spam_messages"], stats["ham_messages"]) == (2, 2)
    assert stats["instance"]["spam_messages"] == 2
    assert stats["instance"]["ham_messages"] == 2
    assert stats["confidence"] == 0.2  # two of each, of the ten that make it decide alone
    assert "spam_messages=2" in text.out.splitlines()


def test_a_bad_file_is_refused_and_nothing_is_taught(
    cli: Cli, workspace_id: str, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"data": {"message": "hi"}}\nnot json\n', encoding="utf-8")

    result = cli(
        "spam",
        "train",
        "--workspace",
        workspace_id,
        "--ham",
        str(SAMPLES / "intake.jsonl"),
        "--spam",
        str(broken),
    )

    assert result.code == 1
    assert "broken.jsonl: line 2 is not JSON" in result.err
    assert cli.json("spam", "stats", "--workspace", workspace_id)["ham_messages"] == 0


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"\xff\xfe not utf-8", "not UTF-8 text"),
        (b"message,email\r\n", "no message in it"),
    ],
)
def test_a_file_that_is_no_export_is_refused(
    cli: Cli, workspace_id: str, tmp_path: Path, content: bytes, said: str
) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(content)

    result = cli("spam", "train", "--workspace", workspace_id, "--spam", str(path))

    assert result.code == 1
    assert said in result.err


def test_an_export_piped_in_is_read_once_and_taught(cli: Cli, workspace_id: str) -> None:
    # `intake submissions export ... | intake spam train --spam /dev/stdin`, or a shell's
    # <(...): a pipe can be read only once, and both passes must see it whole.
    reading, writing = os.pipe()
    os.write(writing, (SAMPLES / "intake.csv").read_bytes())
    os.close(writing)
    try:
        document = _train(cli, workspace_id, "--spam", f"/dev/fd/{reading}")
    finally:
        os.close(reading)

    assert document["taught"] == {"spam": 2, "ham": 0}
    assert document["spam_messages"] == 2


def test_a_piped_export_over_the_size_cap_is_refused(
    cli: Cli, workspace_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spam, "MAX_FILE_BYTES", 100)
    reading, writing = os.pipe()
    os.write(writing, ("message\r\n" + "hello\r\n" * 20).encode())
    os.close(writing)
    try:
        result = cli("spam", "train", "--workspace", workspace_id, "--spam", f"/dev/fd/{reading}")
    finally:
        os.close(reading)

    assert result.code == 1
    assert "larger than" in result.err
    assert cli.json("spam", "stats", "--workspace", workspace_id)["spam_messages"] == 0


def test_a_file_over_the_size_cap_is_refused_unread(
    cli: Cli, workspace_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spam, "MAX_FILE_BYTES", 100)
    path = tmp_path / "big.csv"
    path.write_text("message\r\n" + "hello\r\n" * 20, encoding="utf-8")

    result = cli("spam", "train", "--workspace", workspace_id, "--spam", str(path))

    assert result.code == 1
    assert "larger than" in result.err


def test_a_missing_file_or_no_file_is_refused(cli: Cli, workspace_id: str) -> None:
    missing = cli("spam", "train", "--workspace", workspace_id, "--spam", "/nonexistent.csv")
    nothing = cli("spam", "train", "--workspace", workspace_id)

    assert missing.code == 1
    assert "/nonexistent.csv" in missing.err
    assert nothing.code == 1
    assert "give --spam FILE, --ham FILE or both" in nothing.err


def test_an_unknown_workspace_is_refused(cli: Cli) -> None:
    train = cli("spam", "train", "--workspace", "ws_nope", "--spam", str(SAMPLES / "intake.csv"))
    stats = cli("spam", "stats", "--workspace", "ws_nope")

    assert (train.code, stats.code) == (1, 1)
    assert "ws_nope" in stats.err
