"""A form's messages in the dashboard: owners set the switches and the templates through
the service and checks of PATCH /v1/forms/{id}, a refused template is named next to its
box and nothing is saved, the preview shows what the typed templates make (escaped), and
members are refused."""

from __future__ import annotations

import httpx2
import pytest

from intake.domain.form_messages import TEMPLATE_NAMES, Templates
from intake.domain.model import Form
from intake.domain.users import Role
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard

UNCHANGED = {
    "mail_notifications": "on",
    "autoresponse_hourly_limit": "",
    **dict.fromkeys(TEMPLATE_NAMES, ""),
}


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


class Messages:
    def __init__(self, dash: Dashboard) -> None:
        self.dash = dash
        self.path = f"/dashboard/forms/{dash.form.form_id}/settings/messages"

    def save(self, action: str = "", **changed: str) -> httpx2.Response:
        token = self.dash.csrf("/dashboard/password")
        return self.dash.client.post(
            self.path + action, data={**UNCHANGED, **changed, "csrf": token}
        )

    def stored(self) -> Form:
        return self.dash.svc.run(self.dash.svc.services.forms.get, self.dash.form.form_id)


@pytest.fixture
def messages(dash: Dashboard) -> Messages:
    return Messages(dash)


def test_an_owner_saves_the_switches_and_templates(messages: Messages) -> None:
    messages.dash.owner_signs_in()
    page = messages.dash.client.get(messages.path)
    assert page.status_code == 200
    assert 'aria-current="page">Messages</a>' in page.text

    saved = messages.save(
        autoresponse="on",
        forward_only="on",
        mail_notifications="",
        autoresponse_hourly_limit="12",
        autoresponse_text="Thanks {{ fields.name }}\r\nWe will answer.",
    )

    assert saved.status_code == 303
    assert saved.headers["location"] == messages.path + "?saved=1"
    stored = messages.stored().messages
    assert (stored.autoresponse, stored.forward_only, stored.mail_notifications) == (
        True,
        True,
        False,
    )
    assert stored.autoresponse_hourly_limit == 12
    assert stored.templates == Templates(
        autoresponse_text="Thanks {{ fields.name }}\nWe will answer."
    )
    shown = messages.dash.client.get(saved.headers["location"])
    assert "Messages saved." in shown.text
    assert "Thanks {{ fields.name }}" in shown.text


def test_a_template_reaching_outside_the_sandbox_is_named_and_nothing_saved(
    messages: Messages,
) -> None:
    messages.dash.owner_signs_in()
    before = messages.stored()

    refused = messages.save(autoresponse="on", notification_subject="{{ ''.__class__ }}")

    assert refused.status_code == 422
    assert 'id="notification_subject-error"' in refused.text
    assert "__class__" in refused.text
    assert messages.stored() == before


def test_the_preview_shows_the_typed_templates_escaped_without_saving(
    messages: Messages,
) -> None:
    messages.dash.owner_signs_in()

    shown = messages.save(
        "/preview",
        kind="autoresponse",
        autoresponse_subject="Thanks {{ fields.name }}",
        autoresponse_html="<p>{{ fields.name }}: {{ fields.message }}</p>",
    )

    assert shown.status_code == 200
    # The visitor's name in the body only: a confirmation's subject never carries it.
    assert "Thanks Ada Lovelace" not in shown.text
    # The HTML part as text on the page: the sample's markup escaped twice over.
    assert "&lt;p&gt;Ada Lovelace: Hello &amp;lt;b&amp;gt;there" in shown.text
    assert messages.stored().messages.templates == Templates()


def test_a_member_is_refused(messages: Messages) -> None:
    dash = messages.dash
    dash.set_password(dash.link("member@example.com", Role.MEMBER))
    before = messages.stored()

    answers = [dash.client.get(messages.path), messages.save(autoresponse="on")]

    assert [answer.status_code for answer in answers] == [403, 403]
    assert messages.stored() == before
