"""`intake user create/list/remove`: dashboard users and their one-time sign-in links."""

from __future__ import annotations

import re

from tests.cli.conftest import Cli

LINK = re.compile(r"http://127\.0\.0\.1:\d+/dashboard/sign-in/[0-9a-z]{39}")


def _workspace(cli: Cli, name: str = "Acme") -> str:
    workspace_id: str = cli.json("workspace", "create", "--name", name)["workspace_id"]
    return workspace_id


def test_user_create_prints_a_one_time_link_and_the_list_shows_no_password(cli: Cli) -> None:
    workspace_id = _workspace(cli)

    created = cli.json(
        "user",
        "create",
        "--email",
        " Ada@Example.COM ",
        "--workspace",
        workspace_id,
        "--role",
        "owner",
    )

    assert created["email"] == "ada@example.com"
    assert created["memberships"] == [{"workspace_id": workspace_id, "role": "owner"}]
    assert LINK.fullmatch(created["sign_in_link"])
    (listed,) = cli.json("user", "list")["users"]
    assert listed["user_id"] == created["user_id"]
    assert listed["password_set"] is False
    assert "sign_in_link" not in listed
    token = created["sign_in_link"].rsplit("/", 1)[1]
    assert token not in cli("user", "list").out


def test_user_create_without_json_prints_the_link_line(cli: Cli) -> None:
    workspace_id = _workspace(cli)

    lines = cli("user", "create", "--email", "bo@example.com", "--workspace", workspace_id).out

    first, link_line, note = lines.splitlines()
    assert "member of " + workspace_id in first
    assert LINK.fullmatch(link_line.removeprefix("sign_in_link="))
    assert "24 hours" in note


def test_user_list_by_workspace(cli: Cli) -> None:
    acme, other = _workspace(cli), _workspace(cli, "Other")
    cli.json("user", "create", "--email", "a@example.com", "--workspace", acme)
    cli.json("user", "create", "--email", "b@example.com", "--workspace", other)

    listed = cli.json("user", "list", "--workspace", other)["users"]

    assert [u["email"] for u in listed] == ["b@example.com"]
    assert "no users" in cli("user", "list", "--workspace", "ws_none").out


def test_user_remove_by_email_or_id(cli: Cli) -> None:
    workspace_id = _workspace(cli)
    a = cli.json("user", "create", "--email", "a@example.com", "--workspace", workspace_id)
    cli.json("user", "create", "--email", "b@example.com", "--workspace", workspace_id)
    # No one is an owner here: no workspace is left without one.

    assert cli.json("user", "remove", "--email", "A@example.com")["user_id"] == a["user_id"]
    removed_b = cli.json(
        "user", "remove", "--email", cli.json("user", "list")["users"][0]["user_id"]
    )

    assert removed_b["email"] == "b@example.com"
    assert cli.json("user", "list")["users"] == []
    assert cli("user", "remove", "--email", "a@example.com").code == 1


def test_user_create_refusals(cli: Cli) -> None:
    workspace_id = _workspace(cli)
    cli.json("user", "create", "--email", "a@example.com", "--workspace", workspace_id)

    assert cli("user", "create", "--email", "a@example.com", "--workspace", workspace_id).code == 1
    assert cli("user", "create", "--email", "not-an-address", "--workspace", workspace_id).code == 1
    assert cli("user", "create", "--email", "c@example.com", "--workspace", "ws_nope").code == 1
    assert (
        cli(
            "user",
            "create",
            "--email",
            "c@example.com",
            "--workspace",
            workspace_id,
            "--role",
            "admin",
        ).code
        == 2
    )


def test_user_role_changes_a_role_and_keeps_the_last_owner(cli: Cli) -> None:
    workspace_id = _workspace(cli)
    owner = ("--workspace", workspace_id, "--role", "owner")
    cli.json("user", "create", "--email", "a@example.com", *owner)
    b = cli.json("user", "create", "--email", "b@example.com", "--workspace", workspace_id)

    promoted = cli.json("user", "role", "--email", b["user_id"], *owner)
    demoted = cli.json(
        "user", "role", "--email", "A@example.com", "--workspace", workspace_id, "--role", "member"
    )
    last = cli(
        "user", "role", "--email", "b@example.com", "--workspace", workspace_id, "--role", "member"
    )

    assert promoted["memberships"] == [{"workspace_id": workspace_id, "role": "owner"}]
    assert demoted["memberships"] == [{"workspace_id": workspace_id, "role": "member"}]
    assert last.code == 1
    assert "at least one owner" in last.err
    assert cli("user", "role", "--email", "c@example.com", *owner).code == 1
    assert (
        cli(
            "user", "role", "--email", "b@example.com", "--workspace", "ws_no", "--role", "owner"
        ).code
        == 1
    )


def test_user_remove_keeps_the_last_owner_of_a_workspace(cli: Cli) -> None:
    workspace_id = _workspace(cli)
    owner = ("--workspace", workspace_id, "--role", "owner")
    cli.json("user", "create", "--email", "boss@example.com", *owner)
    two = cli.json("user", "create", "--email", "two@example.com", "--workspace", workspace_id)

    refused = cli("user", "remove", "--email", "boss@example.com")

    assert refused.code == 1
    assert "at least one owner" in refused.err
    assert len(cli.json("user", "list")["users"]) == 2  # nothing of them removed
    cli.json("user", "role", "--email", two["user_id"], *owner)
    assert cli.json("user", "remove", "--email", "boss@example.com")["email"] == "boss@example.com"
    assert "at least one owner" in cli("user", "remove", "--email", "two@example.com").err


def test_user_link_prints_a_link_that_sets_the_password(cli: Cli) -> None:
    workspace_id = _workspace(cli)
    created = cli.json("user", "create", "--email", "a@example.com", "--workspace", workspace_id)

    linked = cli.json("user", "link", "--email", "A@example.com")
    human = cli("user", "link", "--email", created["user_id"]).out.splitlines()

    assert linked["user_id"] == created["user_id"]
    assert LINK.fullmatch(linked["sign_in_link"])
    assert linked["sign_in_link"] != created["sign_in_link"]
    assert LINK.fullmatch(human[0].removeprefix("sign_in_link="))
    assert cli("user", "link", "--email", "nobody@example.com").code == 1
