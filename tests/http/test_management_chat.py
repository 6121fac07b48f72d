"""The management API's chat destinations over HTTP, on every backend: add, list, remove
and test, each refusal of bad input, and never the URL or token in an answer."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from intake.adapters.chat.sender import HttpChatSender
from intake.adapters.memory.senders import FakeWebhookSender
from intake.domain.model import Scope
from intake.service.relay import Relay
from tests.http.conftest import (
    Seeded,
    assert_error,
)

SLACK = "https://hooks.slack.com/services/T000/B000/s3cr3tpart"
TOKEN = "123456789:AAH-test-token_abcdefghijklmnopqrstu"


class Owner:
    def __init__(self, seeded: Seeded) -> None:
        svc = self.svc = seeded.svc
        self.workspace_id = seeded.workspace.workspace_id
        self.form_id = seeded.form.form_id
        created = svc.run(
            svc.services.keys.create, self.workspace_id, scopes=frozenset({Scope.MANAGE})
        )
        self.headers = {"authorization": f"Bearer {created.secret}"}
        reader = svc.run(
            svc.services.keys.create, self.workspace_id, scopes=frozenset({Scope.READ})
        )
        self.read_headers = {"authorization": f"Bearer {reader.secret}"}

    def request(self, method: str, path: str, **options: Any) -> httpx2.Response:
        return self.svc.client.request(method, path, headers=self.headers, **options)

    @property
    def path(self) -> str:
        return f"/v1/forms/{self.form_id}/destinations"


@pytest.fixture
def owner(seeded: Seeded) -> Owner:
    return Owner(seeded)


def _refused(response: httpx2.Response, code: str, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


def test_a_destination_is_added_listed_and_removed_without_its_secret(owner: Owner) -> None:
    slack = owner.request("POST", owner.path, json={"kind": "slack", "url": SLACK})
    telegram = owner.request(
        "POST",
        owner.path,
        json={
            "kind": "telegram",
            "telegram_token": TOKEN,
            "telegram_chat_id": "-100123",
            "include_flagged": True,
        },
    )
    listed = owner.svc.client.get(owner.path, headers=owner.read_headers)

    assert slack.status_code == 201, slack.text
    assert telegram.status_code == 201, telegram.text
    assert slack.json()["target"] == "hooks.slack.com"
    assert telegram.json()["target"] == "-100123"
    assert listed.status_code == 200, listed.text
    items = listed.json()["data"]
    assert sorted((d["kind"], d["include_flagged"]) for d in items) == [
        ("slack", False),
        ("telegram", True),
    ]
    for answer in (slack, telegram, listed):
        assert "s3cr3tpart" not in answer.text
        assert "AAH-test" not in answer.text

    removed = owner.request("DELETE", f"/v1/destinations/{slack.json()['destination_id']}")
    again = owner.request("DELETE", f"/v1/destinations/{slack.json()['destination_id']}")

    assert removed.status_code == 204
    _refused(again, "not_found", 404)
    assert len(owner.svc.client.get(owner.path, headers=owner.read_headers).json()["data"]) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "irc", "url": SLACK}, "kind"),
        ({"kind": "slack"}, "url"),
        ({"kind": "slack", "url": "http://hooks.slack.com/x"}, "url"),
        ({"kind": "discord", "url": "https://10.0.0.1/api/webhooks/1/x"}, "url"),
        ({"kind": "teams", "url": SLACK, "telegram_token": TOKEN}, "telegram_token"),
        ({"kind": "telegram", "telegram_token": "nope", "telegram_chat_id": "1"}, "telegram_token"),
        (
            {"kind": "telegram", "telegram_token": TOKEN, "telegram_chat_id": "x y"},
            "telegram_chat_id",
        ),
        ({"kind": "telegram", "url": SLACK}, "url"),
        ({"kind": "slack", "url": SLACK, "include_flagged": "yes"}, "include_flagged"),
        ({"kind": "slack", "url": SLACK, "colour": "red"}, "colour"),
    ],
)
def test_bad_input_is_refused_naming_the_field(
    owner: Owner, body: dict[str, Any], field: str
) -> None:
    answer = owner.request("POST", owner.path, json=body)

    found = assert_error(answer, "validation_failed")
    assert field in found["error"]["fields"], found
    assert "s3cr3tpart" not in answer.text
    assert TOKEN not in answer.text


def test_a_read_key_may_list_but_not_add(owner: Owner) -> None:
    answer = owner.svc.client.post(
        owner.path, headers=owner.read_headers, json={"kind": "slack", "url": SLACK}
    )

    _refused(answer, "forbidden", 403)


def test_another_workspaces_destination_is_not_found(owner: Owner) -> None:
    svc = owner.svc
    other = svc.run(svc.services.workspaces.create, "Other")
    form = svc.run(svc.services.forms.create, other.workspace_id)
    theirs = owner.request(
        "POST", f"/v1/forms/{form.form_id}/destinations", json={"kind": "slack", "url": SLACK}
    )
    added = owner.request("POST", owner.path, json={"kind": "slack", "url": SLACK}).json()
    key = svc.run(svc.services.keys.create, other.workspace_id, scopes=frozenset({Scope.MANAGE}))
    stranger = {"authorization": f"Bearer {key.secret}"}

    _refused(theirs, "not_found", 404)
    for method, path in (
        ("DELETE", f"/v1/destinations/{added['destination_id']}"),
        ("POST", f"/v1/destinations/{added['destination_id']}/test"),
    ):
        _refused(svc.client.request(method, path, headers=stranger), "not_found", 404)


def test_a_test_message_is_queued_and_sent_to_that_destination_only(owner: Owner) -> None:
    svc = owner.svc
    added = owner.request("POST", owner.path, json={"kind": "slack", "url": SLACK}).json()
    owner.request("POST", owner.path, json={"kind": "discord", "url": SLACK + "/other"})
    webhooks = FakeWebhookSender()
    chat = HttpChatSender(webhooks, telegram_api_url="https://api.telegram.org")
    relay = Relay(svc.store, FakeWebhookSender(), None, svc.clock, chat_sender=chat)

    queued = owner.request("POST", f"/v1/destinations/{added['destination_id']}/test")
    totals = svc.run(relay.run_once)

    assert queued.status_code == 202, queued.text
    body = queued.json()
    assert (body["event_type"], body["kind"], body["destination_id"]) == (
        "chat.test",
        "chat",
        added["destination_id"],
    )
    assert (totals.delivered, totals.dead) == (1, 0)
    [sent] = webhooks.sent
    assert sent.url == SLACK
    assert "Test message" in json.loads(sent.body)["text"]
