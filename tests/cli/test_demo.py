from __future__ import annotations

import json
import re
import shlex
from urllib.parse import urlsplit

import pytest
from starlette.testclient import TestClient

from tests.cli.conftest import Cli

DEMO_KEYS = {"workspace_id", "form_id", "public_form_key", "url", "curl"}
USER_KEYS = {"dashboard_url", "sign_in_url", "user_id", "user_email", "sign_in_link"}
LINK = re.compile(r"http://127\.0\.0\.1:8000/dashboard/sign-in/[0-9a-z]{39}")
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
PASSWORD = "correct horse battery"


def test_demo_creates_a_demo_workspace_and_form(cli: Cli) -> None:
    doc = cli.json("demo")

    assert set(doc) == DEMO_KEYS | USER_KEYS
    (workspace,) = cli.json("workspace", "list")["workspaces"]
    assert (workspace["workspace_id"], workspace["name"]) == (doc["workspace_id"], "demo")
    form = cli.json("form", "show", doc["form_id"])
    assert (form["name"], form["public_form_key"]) == ("demo", doc["public_form_key"])
    assert doc["url"] == f"http://127.0.0.1:8000/f/{doc['public_form_key']}"


def test_demo_is_idempotent(cli: Cli) -> None:
    first = cli.json("demo")
    second = cli.json("demo")

    # The same except for the sign-in link: each run issues a fresh one.
    assert {k: v for k, v in second.items() if k != "sign_in_link"} == {
        k: v for k, v in first.items() if k != "sign_in_link"
    }
    assert second["sign_in_link"] != first["sign_in_link"]
    assert len(cli.json("workspace", "list")["workspaces"]) == 1
    assert len(cli.json("form", "list")["forms"]) == 1
    assert len(cli.json("user", "list")["users"]) == 1


def test_demo_brings_a_paused_demo_form_back(cli: Cli) -> None:
    first = cli.json("demo")
    cli.json("form", "pause", first["form_id"])
    cli.json("workspace", "suspend", first["workspace_id"])

    assert cli.json("demo")["form_id"] == first["form_id"]
    assert cli.json("form", "show", first["form_id"])["enabled"] is True
    assert cli.json("workspace", "show", first["workspace_id"])["active"] is True


def test_a_renamed_demo_form_is_the_demo_form_still(cli: Cli) -> None:
    first = cli.json("demo")
    cli.json("form", "update", first["form_id"], "--name", "Contact us")

    again = cli.json("demo")

    assert again["form_id"] == first["form_id"]
    assert len(cli.json("form", "list")["forms"]) == 1
    assert cli.json("form", "show", first["form_id"])["name"] == "Contact us"  # kept


def test_the_demo_form_is_the_workspaces_first_when_others_were_added(cli: Cli) -> None:
    first = cli.json("demo")
    cli.json("form", "update", first["form_id"], "--name", "Contact us")
    cli.json("form", "create", "--workspace", first["workspace_id"], "--name", "Jobs")

    assert cli.json("demo")["form_id"] == first["form_id"]
    assert len(cli.json("form", "list")["forms"]) == 2


def test_demo_url_follows_the_configured_host_and_port(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_HOST", "0.0.0.0")  # a wildcard is reached through loopback
    monkeypatch.setenv("INTAKE_PORT", "9123")

    doc = cli.json("demo")

    assert doc["url"].startswith("http://127.0.0.1:9123/f/")


def test_the_demo_curl_command_gets_a_201(cli: Cli, http: TestClient) -> None:
    doc = cli.json("demo")
    human = cli("demo").out.splitlines()
    assert human[-1] == doc["curl"]
    assert f"public_form_key={doc['public_form_key']}" in human

    # Replays exactly what the printed command sends.
    words = shlex.split(doc["curl"])
    assert words[:2] == ["curl", "-i"]
    url = words[2]
    headers = dict(words[i + 1].split(": ", 1) for i, word in enumerate(words) if word == "-H")
    body = words[words.index("-d") + 1]
    assert json.loads(body) == {"email": "you@example.com", "message": "Hello"}
    response = http.post(urlsplit(url).path, content=body.encode(), headers=headers)

    assert response.status_code == 201, response.text
    assert response.json()["submission_id"]


def _set_password(http: TestClient, link: str, password: str = PASSWORD) -> int:
    """What a browser does with the link: open its page, then post the password."""
    path = urlsplit(link).path
    page = http.get(path)
    assert page.status_code == 200, page.text
    found = CSRF.search(page.text)
    assert found is not None
    answer = http.post(
        path,
        data={"csrf": found.group(1), "password": password, "confirm": password},
        follow_redirects=False,
    )
    return answer.status_code


def _sign_in(http: TestClient, email: str, password: str) -> int:
    page = http.get("/dashboard/sign-in")
    found = CSRF.search(page.text)
    assert found is not None
    answer = http.post(
        "/dashboard/sign-in",
        data={"csrf": found.group(1), "email": email, "password": password},
        follow_redirects=False,
    )
    return answer.status_code


def test_demo_makes_an_owner_whose_link_signs_in_to_the_dashboard(
    cli: Cli, http: TestClient
) -> None:
    doc = cli.json("demo")

    assert doc["dashboard_url"] == "http://127.0.0.1:8000/dashboard"
    assert doc["sign_in_url"] == "http://127.0.0.1:8000/dashboard/sign-in"
    assert doc["user_email"] == "demo@example.com"
    assert LINK.fullmatch(doc["sign_in_link"])
    (user,) = cli.json("user", "list")["users"]
    assert user["user_id"] == doc["user_id"]
    assert user["memberships"] == [{"workspace_id": doc["workspace_id"], "role": "owner"}]
    assert user["password_set"] is False

    assert _set_password(http, doc["sign_in_link"]) == 303
    home = http.get("/dashboard")
    assert home.status_code == 200
    assert "demo@example.com" in home.text
    assert doc["form_id"] in home.text


def test_running_demo_again_gives_a_fresh_link_that_works(cli: Cli, http: TestClient) -> None:
    first = cli.json("demo")["sign_in_link"]

    second = cli.json("demo")["sign_in_link"]

    assert LINK.fullmatch(second)
    assert second != first
    assert _set_password(http, second) == 303
    assert http.get("/dashboard").status_code == 200


def test_once_the_demo_user_has_a_password_demo_prints_the_sign_in_page(
    cli: Cli, http: TestClient
) -> None:
    assert _set_password(http, cli.json("demo")["sign_in_link"]) == 303
    http.cookies.clear()

    again = cli.json("demo")
    human = cli("demo").out.splitlines()

    # No link: one would reset the password the user chose.
    assert again["sign_in_link"] is None
    assert "demo@example.com has a password already: sign in at " + again["sign_in_url"] in human
    assert not any(line.startswith("sign_in_link=") for line in human)
    assert any("`intake user link --email demo@example.com`" in line for line in human)
    assert cli.json("user", "list")["users"][0]["password_set"] is True
    assert _sign_in(http, "demo@example.com", PASSWORD) == 303


def test_a_removed_demo_user_is_made_again_with_a_link(cli: Cli) -> None:
    first = cli.json("demo")
    # The demo workspace keeps an owner: the demo user goes once another is made.
    assert cli("user", "remove", "--email", "demo@example.com").code == 1
    workspace = first["workspace_id"]
    cli.json(
        "user", "create", "--email", "o@example.com", "--workspace", workspace, "--role", "owner"
    )
    cli.json("user", "remove", "--email", "demo@example.com")

    again = cli.json("demo")

    assert again["user_id"] != first["user_id"]
    assert LINK.fullmatch(again["sign_in_link"])


def test_the_demo_prints_the_dashboard_and_its_link_beside_the_curl_command(cli: Cli) -> None:
    doc = cli.json("demo")
    human = cli("demo").out.splitlines()

    assert (
        f"dashboard: {doc['dashboard_url']} (user demo@example.com, owner of the demo workspace)"
        in human
    )
    (link_line,) = [line for line in human if line.startswith("sign_in_link=")]
    assert LINK.fullmatch(link_line.removeprefix("sign_in_link="))
    assert human[-1] == doc["curl"]


def test_the_dashboard_address_follows_intake_base_url(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INTAKE_BASE_URL", "https://forms.example.org/")

    doc = cli.json("demo")

    assert doc["dashboard_url"] == "https://forms.example.org/dashboard"
    assert doc["sign_in_link"].startswith("https://forms.example.org/dashboard/sign-in/")
