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


def test_a_key_created_without_a_scope_only_submits(cli: Cli) -> None:
    workspace_id, _ = _workspace_and_form(cli)

    created = cli.json("key", "create", "--workspace", workspace_id)

    assert created["scopes"] == ["submit"]
    (listed,) = cli.json("key", "list", "--workspace", workspace_id)["keys"]
    assert listed["scopes"] == ["submit"]


def test_scopes_are_repeatable_and_printed_in_their_order(cli: Cli) -> None:
    workspace_id, _ = _workspace_and_form(cli)

    created = cli.json(
        "key", "create", "--workspace", workspace_id,
        "--scope", "manage", "--scope", "submit", "--scope", "manage",
    )  # fmt: skip

    assert created["scopes"] == ["submit", "manage"]
    (listed,) = cli.json("key", "list", "--workspace", workspace_id)["keys"]
    assert listed["scopes"] == ["submit", "manage"]
    revoked = cli.json("key", "revoke", created["key_id"])
    assert revoked["scopes"] == ["submit", "manage"]


def test_key_list_shows_each_keys_scopes(cli: Cli) -> None:
    workspace_id, _ = _workspace_and_form(cli)
    cli.json("key", "create", "--workspace", workspace_id, "--scope", "read")
    cli.json("key", "create", "--workspace", workspace_id)

    lines = cli("key", "list", "--workspace", workspace_id).out.splitlines()

    assert "SCOPES" in lines[0]
    assert [line.split()[3] for line in lines[1:]] == ["read", "submit"]


def test_an_unknown_scope_is_a_usage_error_and_creates_nothing(cli: Cli) -> None:
    workspace_id, _ = _workspace_and_form(cli)

    result = cli("key", "create", "--workspace", workspace_id, "--scope", "admin")

    assert result.code == 2
    assert "admin" in result.err
    assert "submit" in result.err  # the choices are named
    assert cli.json("key", "list", "--workspace", workspace_id)["keys"] == []


def test_a_read_key_cannot_submit(cli: Cli, http: TestClient) -> None:
    workspace_id, form_id = _workspace_and_form(cli)
    created = cli.json("key", "create", "--workspace", workspace_id, "--scope", "read")

    response = http.post(
        f"/v1/forms/{form_id}/submissions",
        json={"message": "hi"},
        headers={"Authorization": f"Bearer {created['api_key']}"},
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_key_revoke_prints_the_scopes(cli: Cli) -> None:
    workspace_id, _ = _workspace_and_form(cli)
    created = cli.json("key", "create", "--workspace", workspace_id, "--scope", "read")

    lines = cli("key", "revoke", created["key_id"]).out.splitlines()

    assert "scopes=read" in lines
