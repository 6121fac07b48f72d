from __future__ import annotations

from starlette.testclient import TestClient

from tests.cli.conftest import Cli


def _workspace_and_form(cli: Cli) -> tuple[str, str]:
    workspace_id = cli.json("workspace", "create", "--name", "Acme")["workspace_id"]
    form_id = cli.json("form", "create", "--workspace", workspace_id)["form_id"]
    return workspace_id, form_id


def test_key_create_shows_the_secret_once_and_the_list_its_prefix(cli: Cli) -> None:
    workspace_id, _ = _workspace_and_form(cli)

    created = cli.json("key", "create", "--workspace", workspace_id)

    assert created["key_id"].startswith("key_")
    secret = created["api_key"]
    assert secret.startswith("intake_sk_")
    (listed,) = cli.json("key", "list", "--workspace", workspace_id)["keys"]
    assert listed["key_id"] == created["key_id"]
    assert secret.startswith(listed["prefix"])
    assert listed["revoked"] is False
    # Nothing after creation prints the secret again.
    assert secret not in cli("key", "list", "--workspace", workspace_id, "--json").out
    assert secret not in cli("key", "list", "--workspace", workspace_id).out


def test_the_created_key_authenticates_until_revoked(cli: Cli, http: TestClient) -> None:
    workspace_id, form_id = _workspace_and_form(cli)
    created = cli.json("key", "create", "--workspace", workspace_id)
    path = f"/v1/forms/{form_id}/submissions"
    auth = {"Authorization": f"Bearer {created['api_key']}"}

    assert http.post(path, json={"message": "hi"}, headers=auth).status_code == 201

    revoked = cli.json("key", "revoke", created["key_id"])
    assert revoked["revoked"] is True
    assert http.post(path, json={"message": "hi"}, headers=auth).status_code == 401
    (listed,) = cli.json("key", "list", "--workspace", workspace_id)["keys"]
    assert listed["revoked"] is True


def test_key_create_without_json_prints_the_secret_and_a_warning(cli: Cli) -> None:
    workspace_id, _ = _workspace_and_form(cli)

    lines = cli("key", "create", "--workspace", workspace_id).out.splitlines()

    assert lines[0].startswith("key key_")
    assert lines[1].startswith("api_key=intake_sk_")
    assert "not shown again" in lines[2]


def test_key_commands_refuse_unknown_ids(cli: Cli) -> None:
    assert cli("key", "create", "--workspace", "ws_nope").code == 1
    assert cli("key", "list", "--workspace", "ws_nope").code == 1
    result = cli("key", "revoke", "key_nope", "--json")
    assert result.code == 1
    assert result.document["ok"] is False


def test_key_list_needs_a_workspace(cli: Cli) -> None:
    assert cli("key", "list").code == 2
