"""Chat destinations end to end, on the embedded SQLite file and on PostgreSQL: added with
`intake destination add`, a submission made over HTTP reaches a local fake of Slack,
Discord, Microsoft Teams and Telegram through `intake relay`, each fake
checking the request as the real API would. What a visitor typed arrives inert in every
app (no mention, link, markup or control character), a long submission is cut to each
app's limits, a 429 is waited out as its Retry-After asks, and a 4xx is not retried."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from intake.config import Settings
from intake.entrypoints.http.app import create_app
from tests.conftest import new_postgres_database
from tests.support.chat_servers import (
    TELEGRAM_CHAT,
    TELEGRAM_TOKEN,
    ChatApps,
    ChatRequest,
)
from tests.support.processes import clean_env, console_script, run_cli

pytestmark = [pytest.mark.slow]

BASE_URL = "https://intake.example"
APPS = ("slack", "discord", "teams", "telegram")
HOSTILE = (
    "@channel @here @everyone <!channel> <!here|here> <@U123> <@&987654> <#C42> "
    "*bold* _it_ ~gone~ `code` ```block``` [click](https://evil.example) "
    '<https://evil.example|click> <b>bold</b> <a href="https://evil.example">x</a> '
    "&amp; # Heading\n> quote\n- item\x07\x1b[31m\u202eevil\u2066 @admin"
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.services)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'intake.db'}"
    else:
        with new_postgres_database(migrated=True) as url:
            yield url


@pytest.fixture
def env(database: str, chat_apps: ChatApps) -> dict[str, str]:
    return clean_env(
        INTAKE_DATABASE_URL=database,
        INTAKE_WEBHOOK_ALLOW_PRIVATE="true",  # the fakes are plain http on 127.0.0.1
        INTAKE_TELEGRAM_API_URL=chat_apps.base_url,
        INTAKE_BASE_URL=BASE_URL,
    )


@pytest.fixture
def form(env: dict[str, str], chat_apps: ChatApps, tmp_path: Path) -> dict[str, str]:
    """A form with one destination of each app, added with the command line. Each
    asks for flagged submissions too: the hostile text below scores as spam."""
    run_cli(env, "migrate")
    workspace = run_cli(env, "workspace", "create", "--name", "Chat")["workspace_id"]
    created = run_cli(env, "form", "create", "--workspace", workspace, "--name", "Contact *us*")
    form_id = created["form_id"]
    for app in ("slack", "discord", "teams"):
        added = run_cli(
            env, "destination", "add", "--form", form_id, "--kind", app, "--url",
            chat_apps.url(app), "--include-flagged",
        )  # fmt: skip
        assert added["kind"] == app
    token_file = tmp_path / "telegram-token"
    token_file.write_text(TELEGRAM_TOKEN + "\n")
    added = run_cli(
        env, "destination", "add", "--form", form_id, "--kind", "telegram",
        "--telegram-token-file", str(token_file), "--telegram-chat-id", TELEGRAM_CHAT,
        "--include-flagged",
    )  # fmt: skip
    assert added["target"] == TELEGRAM_CHAT
    return {"form_id": form_id, "public_form_key": created["public_form_key"]}


def _submit(env: Mapping[str, str], public_form_key: str, data: Mapping[str, str]) -> str:
    with TestClient(create_app(Settings.from_env(env))) as client:
        response = client.post(f"/f/{public_form_key}", json=dict(data))
    assert response.status_code == 201, response.text
    submission_id: str = response.json()["submission_id"]
    return submission_id


def _by_app(requests: list[ChatRequest]) -> dict[str, ChatRequest]:
    found = {request.app: request for request in requests}
    assert sorted(found) == sorted(APPS), [r.app for r in requests]
    return found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _unescaped(text: str, marks: str) -> list[str]:
    """The marks in `text` not escaped by a backslash."""
    found, index = [], 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] in marks:
            found.append(text[index])
        index += 1
    return found


def test_a_submission_reaches_every_chat_app_inert_and_linked(
    env: dict[str, str], form: dict[str, str], chat_apps: ChatApps
) -> None:
    submission_id = _submit(
        env, form["public_form_key"], {"email": "ada@example.com", "message": HOSTILE, "<@U9>": "x"}
    )

    counts = run_cli(env, "relay", "--once")

    assert counts == {"delivered": 4, "failed": 0, "dead": 0, "fanned_out": 1}
    requests = _by_app(chat_apps.requests)
    link = f"{BASE_URL}/dashboard/submissions/{submission_id}"
    for request in requests.values():
        assert request.problem is None, (request.app, request.problem)
        texts = list(_strings(request.payload))
        assert not any(_CONTROLS.search(text) for text in texts), request.app
        assert any(link in text for text in texts), request.app
        if request.app != "discord":  # there, each @ is backslash-escaped (below)
            assert not any(re.search(r"@(channel|everyone|here)", t) for t in texts), request.app
        assert "evil" in json.dumps(request.payload)  # the value arrived, made harmless

    slack = requests["slack"].payload
    # Slack reads nothing in plain_text; the one mrkdwn text is the form's name, escaped.
    for block in slack["blocks"]:
        if block["type"] in ("header", "section"):
            assert block["text"]["type"] == "plain_text"
    assert "<" not in slack["text"]
    assert "*" not in slack["text"].replace("*\u2060", "")

    discord = requests["discord"].payload
    assert discord["allowed_mentions"] == {"parse": []}
    (embed,) = discord["embeds"]
    for text in [embed["title"], *[f[k] for f in embed["fields"] for k in ("name", "value")]]:
        assert _unescaped(text, "*_~`[]()<>@#|") == [], text

    card = requests["teams"].payload["attachments"][0]["content"]
    assert "msteams" not in card
    for element in card["body"]:
        for text in _strings(element):
            if text not in ("TextBlock", "FactSet", "Bolder", "Medium", "Small"):
                assert _unescaped(text, "*_~`[]()<>#") == [], text
    assert card["actions"][0]["url"] == link

    telegram = requests["telegram"].payload
    assert telegram["link_preview_options"] == {"is_disabled": True}
    tags = re.findall(r"<(/?[a-z]+)", telegram["text"])
    assert set(tags) <= {"b", "/b", "i", "/i", "a", "/a"}
    assert telegram["text"].count("<a ") == 1
    assert "&lt;b&gt;bold&lt;/b&gt;" in telegram["text"]


def test_a_long_submission_is_cut_to_every_apps_limits(
    env: dict[str, str], form: dict[str, str], chat_apps: ChatApps
) -> None:
    data = {f"field{n:02}": f"{n} " + "x<*&@" * 400 for n in range(90)}
    _submit(env, form["public_form_key"], data)

    counts = run_cli(env, "relay", "--once")

    problems = [(r.app, r.problem) for r in chat_apps.requests]
    assert counts["delivered"] == 4, (counts, problems, _chat_deliveries(env))
    requests = _by_app(chat_apps.requests)
    for request in requests.values():
        assert request.problem is None, (request.app, request.problem)
    assert "more fields" in json.dumps(requests["slack"].payload)
    assert len(requests["discord"].payload["embeds"][0]["fields"]) <= 25
    assert "more fields" in requests["telegram"].payload["text"]


def _chat_deliveries(env: Mapping[str, str]) -> list[dict[str, Any]]:
    deliveries = run_cli(env, "outbox", "list")["deliveries"]
    return [d for d in deliveries if d["kind"] == "chat"]


def test_a_rate_limit_is_waited_out_as_retry_after_asks(
    env: dict[str, str], form: dict[str, str], chat_apps: ChatApps
) -> None:
    _submit(env, form["public_form_key"], {"message": "Hello"})
    chat_apps.answers = [429] * 4
    chat_apps.retry_after = "60"
    before = datetime.now(UTC)

    assert run_cli(env, "relay", "--once") == {
        "delivered": 0, "failed": 4, "dead": 0, "fanned_out": 1,
    }  # fmt: skip

    deliveries = _chat_deliveries(env)
    assert len(deliveries) == 4
    for delivery in deliveries:
        assert delivery["state"] == "pending"
        assert delivery["last_error"] == "HTTP 429"
        # The schedule alone would try again within 6 s.
        due = datetime.fromisoformat(delivery["next_attempt_at"])
        assert due >= before + timedelta(seconds=59)
    assert run_cli(env, "relay", "--once")["delivered"] == 0  # not due yet
    assert len(chat_apps.requests) == 4


def test_a_client_error_is_not_retried_and_a_server_error_is(
    env: dict[str, str], form: dict[str, str], chat_apps: ChatApps
) -> None:
    _submit(env, form["public_form_key"], {"message": "Hello"})
    chat_apps.answers = [404, 403, 500, 500]

    counts = run_cli(env, "relay", "--once")

    assert counts == {"delivered": 0, "failed": 2, "dead": 2, "fanned_out": 1}
    states = sorted((d["state"], d["last_error"]) for d in _chat_deliveries(env))
    assert states == [
        ("dead", "HTTP 403"), ("dead", "HTTP 404"),
        ("pending", "HTTP 500"), ("pending", "HTTP 500"),
    ]  # fmt: skip


def test_the_relay_logs_neither_url_nor_token_nor_what_was_typed(
    env: dict[str, str], form: dict[str, str], chat_apps: ChatApps
) -> None:
    _submit(env, form["public_form_key"], {"message": "Hello from a secret visitor"})
    chat_apps.answers = [500, 429, 404, 400]  # every outcome logs a line

    done = subprocess.run(
        [console_script(), "relay", "--once"],
        env={**env, "INTAKE_LOG_LEVEL": "debug"},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    logged = done.stdout + done.stderr
    assert "delivery_id" in logged
    for secret in (TELEGRAM_TOKEN, "slacksecret", "discordsecret", "teams-secret", "visitor"):
        assert secret not in logged
