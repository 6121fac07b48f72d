"""`intake form create --uploads` and `intake form update --uploads` on PostgreSQL with
no INTAKE_BLOB_URL: refused with a message that says what to set, a non-zero exit, and
the form left as it was. (SQLite has a store by default, beside its database.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cli.conftest import Cli
from tests.conftest import new_postgres_database
from tests.support.processes import TEST_SECRET_KEY

pytestmark = pytest.mark.services


@pytest.fixture
def postgres_without_store(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A new database as INTAKE_DATABASE_URL (in place of the cli fixture's SQLite file),
    no INTAKE_BLOB_URL (the cli fixture has cleared every INTAKE_ setting)."""
    with new_postgres_database() as url:
        monkeypatch.setenv("INTAKE_DATABASE_URL", url)
        monkeypatch.setenv("INTAKE_SECRET_KEY", TEST_SECRET_KEY)
        yield url


@pytest.fixture
def workspace_id(cli: Cli, postgres_without_store: str) -> str:
    cli.json("migrate")
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    assert isinstance(workspace_id, str)
    return workspace_id


def _says_to_set_a_store(message: str) -> bool:
    return "no blob store is configured" in message and "INTAKE_BLOB_URL" in message


@pytest.mark.parametrize("option", [["--uploads"], ["--max-files", "3"]], ids=" ".join)
def test_form_create_taking_files_is_refused(
    cli: Cli, workspace_id: str, option: list[str]
) -> None:
    result = cli("form", "create", "--workspace", workspace_id, *option, "--json")

    assert result.code == 1
    assert _says_to_set_a_store(result.document["error"])
    assert cli.json("form", "list")["forms"] == []


def test_form_update_uploads_is_refused_and_the_form_kept(cli: Cli, workspace_id: str) -> None:
    form = cli.json("form", "create", "--workspace", workspace_id)

    result = cli("form", "update", form["form_id"], "--uploads")

    assert result.code == 1
    assert _says_to_set_a_store(result.err)
    assert cli.json("form", "show", form["form_id"])["uploads"] is None
    # Turning uploads off needs no store.
    assert cli.json("form", "update", form["form_id"], "--no-uploads")["uploads"] is None
