from __future__ import annotations

import json
import shlex
from urllib.parse import urlsplit

import pytest
from starlette.testclient import TestClient

from tests.cli.conftest import Cli


def test_demo_creates_a_demo_workspace_and_form(cli: Cli) -> None:
    doc = cli.json("demo")

    assert set(doc) == {"workspace_id", "form_id", "public_form_key", "url", "curl"}
    (workspace,) = cli.json("workspace", "list")["workspaces"]
    assert (workspace["workspace_id"], workspace["name"]) == (doc["workspace_id"], "demo")
    form = cli.json("form", "show", doc["form_id"])
    assert (form["name"], form["public_form_key"]) == ("demo", doc["public_form_key"])
    assert doc["url"] == f"http://127.0.0.1:8000/f/{doc['public_form_key']}"


def test_demo_is_idempotent(cli: Cli) -> None:
    first = cli.json("demo")
    second = cli.json("demo")

    assert second == first
    assert len(cli.json("workspace", "list")["workspaces"]) == 1
    assert len(cli.json("form", "list")["forms"]) == 1


def test_demo_brings_a_paused_demo_form_back(cli: Cli) -> None:
    first = cli.json("demo")
    cli.json("form", "pause", first["form_id"])
    cli.json("workspace", "suspend", first["workspace_id"])

    assert cli.json("demo")["form_id"] == first["form_id"]
    assert cli.json("form", "show", first["form_id"])["enabled"] is True
    assert cli.json("workspace", "show", first["workspace_id"])["active"] is True


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
