"""`intake secrets generate-key|rotate`, `--challenge-secret-file`, and secrets that are
never printed after they are made, through the command line on its SQLite file (the key
made beside it), and PostgreSQL refused without a key."""

from __future__ import annotations

import io
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import anyio
import pytest
from starlette.testclient import TestClient

from intake.adapters.sealing import AeadSealer
from intake.adapters.sqlite import open_sqlite_store
from intake.adapters.sqlite.key_file import key_file_beside
from intake.domain.sealing import parse_key
from intake.entrypoints.http.app import create_app
from tests.cli.conftest import Cli

CHALLENGE_SECRET = "0x4AAAAAAA-from-a-file-not-the-process-list"


def _path(database_url: str) -> Path:
    return Path(database_url.removeprefix("sqlite:///"))


def _dump(database_url: str) -> str:
    with closing(sqlite3.connect(_path(database_url))) as conn:
        return "\n".join(conn.iterdump())


def _stored_challenge_secret(database_url: str, form_id: str, key: str | None = None) -> str | None:
    """The form's secret as the store reads it: under `key`, else the key file's."""

    async def read() -> str | None:
        sealer = None if key is None else AeadSealer.from_keys(key)
        store = await open_sqlite_store(database_url, sealer=sealer)
        try:
            form = await store.forms.get(form_id)
        finally:
            await store.close()
        assert form is not None
        return None if form.challenge is None else form.challenge.secret

    return anyio.run(read)


@pytest.fixture
def workspace_id(cli: Cli) -> str:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    assert isinstance(workspace_id, str)
    return workspace_id


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "turnstile.secret"
    path.write_text(CHALLENGE_SECRET + "\nanything after the first line is ignored\n")
    return path


def test_generate_key_prints_a_new_key_and_stores_nothing(cli: Cli, database_url: str) -> None:
    one, two = cli("secrets", "generate-key"), cli.json("secrets", "generate-key")

    assert one.code == 0
    assert len(parse_key(one.out.strip())) == 32
    assert len(parse_key(two["key"])) == 32
    assert one.out.strip() != two["key"]
    assert not key_file_beside(str(_path(database_url))).exists()


def test_a_challenge_secret_from_a_file_is_stored_sealed_and_never_printed(
    cli: Cli, database_url: str, workspace_id: str, secret_file: Path
) -> None:
    created = cli(
        "form", "create", "--workspace", workspace_id,
        "--challenge", "turnstile", "--challenge-secret-file", str(secret_file), "--json",
    )  # fmt: skip
    assert created.code == 0, created.err
    form_id = created.document["form_id"]

    printed = [
        created.out,
        cli("form", "show", form_id).out,
        cli("form", "show", form_id, "--json").out,
        cli("form", "list", "--json").out,
        cli("form", "list").out,
    ]
    assert [text for text in printed if CHALLENGE_SECRET in text] == []
    assert created.document["challenge"] == "turnstile"
    assert _stored_challenge_secret(database_url, form_id) == CHALLENGE_SECRET
    assert CHALLENGE_SECRET not in _dump(database_url)
    key_file = key_file_beside(str(_path(database_url)))
    assert key_file.stat().st_mode & 0o777 == 0o600


def test_a_challenge_secret_can_come_from_standard_input(
    cli: Cli, database_url: str, workspace_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    form_id = cli.json("form", "create", "--workspace", workspace_id)["form_id"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("piped-secret-value\n"))

    updated = cli(
        "form", "update", form_id, "--challenge", "hcaptcha", "--challenge-secret-file", "-"
    )

    assert updated.code == 0, updated.err
    assert "piped-secret-value" not in updated.out
    assert _stored_challenge_secret(database_url, form_id) == "piped-secret-value"


def test_a_secret_file_that_cannot_be_read_or_is_empty_is_refused(
    cli: Cli, workspace_id: str, tmp_path: Path, secret_file: Path
) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n")
    base = ("form", "create", "--workspace", workspace_id, "--challenge", "turnstile")

    missing = cli(*base, "--challenge-secret-file", str(tmp_path / "nope"))
    blank = cli(*base, "--challenge-secret-file", str(empty))
    both = cli(*base, "--challenge-secret", "x", "--challenge-secret-file", str(secret_file))

    assert (missing.code, blank.code, both.code) == (1, 1, 2)
    assert "cannot read it" in missing.err
    assert "empty" in blank.err
    assert cli.json("form", "list")["forms"] == []


def test_a_webhook_secret_is_shown_when_made_and_never_again(
    cli: Cli, database_url: str, workspace_id: str
) -> None:
    form_id = cli.json("form", "create", "--workspace", workspace_id)["form_id"]
    added = cli.json("webhook", "add", "--form", form_id, "--url", "https://hooks.example.com/")
    secret = added["secret"]

    printed = [
        cli("webhook", "list", "--form", form_id).out,
        cli("webhook", "list", "--form", form_id, "--json").out,
        cli("form", "show", form_id, "--json").out,
    ]
    assert secret.startswith("whsec_")
    assert [text for text in printed if secret in text] == []
    assert secret not in _dump(database_url)
    assert secret.removeprefix("whsec_") not in _dump(database_url)


def test_rotate_seals_everything_under_the_new_key_and_the_old_one_can_go(
    cli: Cli,
    database_url: str,
    workspace_id: str,
    secret_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    form_id = cli.json(
        "form", "create", "--workspace", workspace_id,
        "--challenge", "turnstile", "--challenge-secret-file", str(secret_file),
    )["form_id"]  # fmt: skip
    cli.json("webhook", "add", "--form", form_id, "--url", "https://hooks.example.com/")
    old_key = key_file_beside(str(_path(database_url))).read_text().strip()
    new_key = cli.json("secrets", "generate-key")["key"]

    monkeypatch.setenv("INTAKE_SECRET_KEY", new_key)  # the key file opens what it sealed
    rotated = cli.json("secrets", "rotate")
    again = cli.json("secrets", "rotate")
    printed = cli("secrets", "rotate").out

    assert rotated["resealed"] == 4
    assert rotated["by_column"] == {
        "forms.challenge_secret": 1,
        "webhook_endpoints.secret": 1,
        "webhook_endpoints.url": 1,
        "secrets.value": 1,
    }
    assert (again["resealed"], again["current"]) == (0, 4)
    assert "0 secret(s) sealed again" in printed
    key_file_beside(str(_path(database_url))).unlink()
    assert old_key not in _dump(database_url)
    assert _stored_challenge_secret(database_url, form_id, new_key) == CHALLENGE_SECRET
    assert cli("webhook", "list", "--form", form_id).code == 0


def test_without_the_key_that_sealed_them_secrets_do_not_open_and_it_says_so(
    cli: Cli, database_url: str, workspace_id: str, secret_file: Path
) -> None:
    cli.json(
        "form", "create", "--workspace", workspace_id,
        "--challenge", "turnstile", "--challenge-secret-file", str(secret_file),
    )  # fmt: skip
    key_file_beside(str(_path(database_url))).unlink()  # a new key is made in its place

    listed = cli("form", "list")

    assert listed.code == 1
    assert "which is not configured" in listed.err


def test_migrate_seals_the_plain_secrets_an_older_version_kept(
    cli: Cli, database_url: str, workspace_id: str
) -> None:
    form_id = cli.json(
        "form", "create", "--workspace", workspace_id,
        "--challenge", "turnstile", "--challenge-secret", "replaced-below",
    )["form_id"]  # fmt: skip
    with closing(sqlite3.connect(_path(database_url))) as conn, conn:
        conn.execute("UPDATE forms SET challenge_secret = ?", ("plain-from-an-older-version",))

    migrated = cli.json("migrate")

    assert migrated == {"applied": [], "sealed": 1}
    assert "plain-from-an-older-version" not in _dump(database_url)
    assert _stored_challenge_secret(database_url, form_id) == "plain-from-an-older-version"
    assert cli.json("migrate") == {"applied": [], "sealed": 0}


def test_migrate_seals_the_webhook_urls_an_older_version_kept_plain(
    cli: Cli, database_url: str, workspace_id: str
) -> None:
    form_id = cli.json("form", "create", "--workspace", workspace_id)["form_id"]
    url = "https://hooks.example.com/in?token=kept-plain-by-an-older-version"
    added = cli.json("webhook", "add", "--form", form_id, "--url", url)
    assert "kept-plain-by-an-older-version" not in _dump(database_url)
    with closing(sqlite3.connect(_path(database_url))) as conn, conn:
        conn.execute("UPDATE webhook_endpoints SET url = ?", (url,))
    assert "kept-plain-by-an-older-version" in _dump(database_url)
    listed_plain = cli.json("webhook", "list", "--form", form_id)["endpoints"]

    migrated = cli.json("migrate")

    assert migrated == {"applied": [], "sealed": 1}
    assert "kept-plain-by-an-older-version" not in _dump(database_url)
    listed = cli.json("webhook", "list", "--form", form_id)["endpoints"]
    assert [e["url"] for e in listed] == [e["url"] for e in listed_plain] == [url]
    assert listed[0]["endpoint_id"] == added["endpoint_id"]
    assert cli.json("migrate") == {"applied": [], "sealed": 0}


@pytest.mark.parametrize(
    "command", [("migrate",), ("relay", "--once"), ("serve",), ("workspace", "list")]
)
def test_postgres_without_a_key_is_refused_in_one_line_that_says_how_to_make_one(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    # Refused before any connection: the server need not exist.
    monkeypatch.setenv("INTAKE_DATABASE_URL", "postgresql://127.0.0.1:9/none")

    refused = cli(*command)

    assert refused.code == 1
    assert refused.err.count("\n") == 1
    assert "INTAKE_SECRET_KEY is not set" in refused.err
    assert "intake secrets generate-key" in refused.err


def test_a_form_whose_secret_does_not_open_answers_503_not_500(
    cli: Cli, database_url: str, workspace_id: str, secret_file: Path
) -> None:
    form = cli.json(
        "form", "create", "--workspace", workspace_id,
        "--challenge", "turnstile", "--challenge-secret-file", str(secret_file),
    )  # fmt: skip
    key_file_beside(str(_path(database_url))).unlink()  # the key that sealed it is lost

    with TestClient(create_app()) as client:
        answer = client.post(f"/f/{form['public_form_key']}", json={"message": "hi"})

    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "service_unavailable"
    assert CHALLENGE_SECRET not in answer.text
