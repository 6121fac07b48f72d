"""A form's chat destinations in the dashboard: owners add one (never shown its URL or
token again; a bad one said, the secret not put back), remove one after confirming, and
send one a test message that the relay posts, as the page then shows; members are
refused, other workspaces' forms are not found."""

from __future__ import annotations

import json

import pytest

from intake.adapters.chat.sender import HttpChatSender
from intake.adapters.memory.senders import FakeWebhookSender
from intake.domain.users import Role
from intake.service.admin import ChatRequest
from intake.service.relay import Relay
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard, isolated

SLACK = "https://hooks.slack.com/services/T000/B000/s3cr3tpart"
TOKEN = "123456789:AAH-test-token_abcdefghijklmnopqrstu"


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def _chat(dash: Dashboard) -> str:
    return f"/dashboard/forms/{dash.form.form_id}/settings/chat"


def _kinds(dash: Dashboard) -> list[str]:
    return sorted(c.app.value for c in dash.svc.run(dash.svc.services.chats.all, dash.form.form_id))


def _add(dash: Dashboard) -> str:
    chat = ChatRequest(kind="slack", url=SLACK)
    return dash.svc.run(dash.svc.services.chats.add, dash.form.form_id, chat).destination_id


def test_an_owner_adds_destinations_never_shown_their_secret(dash: Dashboard) -> None:
    dash.owner_signs_in()

    slack = dash.post(_chat(dash), kind="slack", url=SLACK)
    assert dash.said(slack) == "Added: slack (hooks.slack.com) is told of each submission."
    telegram = dash.post(
        _chat(dash),
        kind="telegram",
        telegram_token=TOKEN,
        telegram_chat_id="-100123",
        include_flagged="yes",
    )

    assert dash.said(telegram) == "Added: telegram (-100123) is told of each submission."
    assert _kinds(dash) == ["slack", "telegram"]
    page = dash.client.get(_chat(dash))
    assert page.status_code == 200
    assert 'aria-current="page">Chat</a>' in page.text
    assert "hooks.slack.com" in page.text
    assert "-100123" in page.text
    assert "accepted and flagged" in page.text
    assert "s3cr3tpart" not in page.text
    assert "AAH-test" not in page.text
    assert "<script>" not in page.text  # the form's name, inert


def test_a_bad_destination_is_said_without_its_secret_and_nothing_is_added(
    dash: Dashboard,
) -> None:
    dash.owner_signs_in()

    plain_http = dash.post(_chat(dash), kind="discord", url="http://discord.example/x")
    bad_token = dash.post(
        _chat(dash), kind="telegram", telegram_token=TOKEN + " x", telegram_chat_id="-1"
    )
    unknown = dash.post(_chat(dash), kind="irc", url=SLACK)

    assert [a.status_code for a in (plain_http, bad_token, unknown)] == [422] * 3
    assert "Webhook URL: webhook URLs must use https" in plain_http.text
    assert "Bot token: not a Telegram bot token" in bad_token.text
    assert "Chat app: the kind must be one of" in unknown.text
    assert "AAH-test" not in bad_token.text
    assert "s3cr3tpart" not in unknown.text
    assert _kinds(dash) == []


def test_removing_asks_first(dash: Dashboard) -> None:
    dash.owner_signs_in()
    chosen = _add(dash)

    asked = dash.post(_chat(dash) + "/remove", destination=chosen)
    assert asked.status_code == 200
    assert "Stop posting this form" in asked.text
    assert _kinds(dash) == ["slack"]

    removed = dash.post(_chat(dash) + "/remove", destination=chosen, confirm="yes")
    assert dash.said(removed).startswith("Removed: slack (")
    assert _kinds(dash) == []


def test_a_test_message_is_posted_by_the_relay_and_the_page_says_so(dash: Dashboard) -> None:
    dash.owner_signs_in()
    chosen = _add(dash)
    webhooks = FakeWebhookSender()
    chat = HttpChatSender(webhooks, telegram_api_url="https://api.telegram.org")
    svc = dash.svc

    location = dash.post(_chat(dash) + "/test", destination=chosen).headers["location"]
    queued = dash.client.get(location)
    svc.run(Relay(svc.store, FakeWebhookSender(), None, svc.clock, chat_sender=chat).run_once)
    shown = dash.client.get(location)

    assert "queued; the relay sends it" in queued.text
    assert f"Test message to {isolated('slack (hooks.slack.com)')}: accepted" in shown.text
    [sent] = webhooks.sent
    assert sent.url == SLACK
    assert "Test message from intake" in json.loads(sent.body)["text"]


def test_a_member_is_refused_and_nothing_changes(dash: Dashboard) -> None:
    chosen = _add(dash)
    dash.set_password(dash.link("member@example.com", Role.MEMBER))

    answers = [
        dash.client.get(_chat(dash)),
        dash.post(_chat(dash), kind="slack", url=SLACK + "2"),
        dash.post(_chat(dash) + "/remove", destination=chosen, confirm="yes"),
        dash.post(_chat(dash) + "/test", destination=chosen),
    ]

    assert [a.status_code for a in answers] == [403] * 4
    assert _kinds(dash) == ["slack"]
    assert dash.svc.run(dash.svc.store.deliveries.list_deliveries) == []


def test_another_workspaces_form_and_destination_are_not_found(dash: Dashboard) -> None:
    other = dash.svc.workspace(name="Other")
    other_form = dash.svc.form(other.workspace_id)
    chat = ChatRequest(kind="slack", url=SLACK)
    theirs = dash.svc.run(dash.svc.services.chats.add, other_form.form_id, chat).destination_id
    dash.owner_signs_in()

    answers = [
        dash.client.get(f"/dashboard/forms/{other_form.form_id}/settings/chat"),
        dash.post(_chat(dash) + "/remove", destination=theirs, confirm="yes"),
        dash.post(_chat(dash) + "/test", destination=theirs),
    ]

    assert [a.status_code for a in answers] == [404] * 3


def test_another_forms_destination_of_the_same_workspace_is_not_found(dash: Dashboard) -> None:
    # The same owner's other form: its destination's id, posted to this form's page, is
    # neither removed nor sent a test.
    second = dash.svc.form(dash.workspace.workspace_id, name="Second")
    chat = ChatRequest(kind="slack", url=SLACK)
    sibling = dash.svc.run(dash.svc.services.chats.add, second.form_id, chat).destination_id
    dash.owner_signs_in()

    answers = [
        dash.post(_chat(dash) + "/remove", destination=sibling),
        dash.post(_chat(dash) + "/remove", destination=sibling, confirm="yes"),
        dash.post(_chat(dash) + "/test", destination=sibling),
    ]

    assert [a.status_code for a in answers] == [404] * 3
    kept = dash.svc.run(dash.svc.services.chats.all, second.form_id)
    assert [c.destination_id for c in kept] == [sibling]
    assert dash.svc.run(dash.svc.store.deliveries.list_deliveries) == []
