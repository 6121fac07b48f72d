"""A form's mail recipients in the dashboard: owners add (the API's rules, a bad address
said and kept), remove after confirming, and send one a test mail that the real relay
takes to a local SMTP server, or parks without one, as the page then shows; members are
refused, other workspaces' forms and recipients are not found, CSRF is required."""

from __future__ import annotations

import re

import pytest

from intake.adapters.mail_smtp import SmtpMailer
from intake.adapters.memory.senders import FakeWebhookSender
from intake.domain.deliveries import DeliveryState
from intake.domain.model import EventType
from intake.domain.users import Role
from intake.ports.senders import Mailer
from intake.service.relay import Relay
from tests.http.conftest import ServiceFactory
from tests.http.dashboard_support import Dashboard, isolated
from tests.support.smtp_server import SmtpServer


@pytest.fixture
def dash(make_service: ServiceFactory) -> Dashboard:
    return Dashboard(make_service())


def _mail(dash: Dashboard) -> str:
    return f"/dashboard/forms/{dash.form.form_id}/settings/mail"


def _recipients(dash: Dashboard) -> list[str]:
    found = dash.svc.run(dash.svc.services.recipients.all, dash.form.form_id)
    return [r.email for r in found]


def _add(dash: Dashboard, email: str) -> str:
    recipient = dash.svc.run(dash.svc.services.recipients.add, dash.form.form_id, email)
    return recipient.recipient_id


def _relay(dash: Dashboard, mailer: Mailer | None) -> None:
    svc = dash.svc
    svc.run(Relay(svc.store, FakeWebhookSender(), mailer, svc.clock).run_once)


def test_an_owner_adds_a_recipient(dash: Dashboard) -> None:
    dash.owner_signs_in()

    added = dash.post(_mail(dash), email="o'neil&co@example.com")

    assert added.status_code == 303
    assert added.headers["location"] == _mail(dash) + "?told=1"
    assert _recipients(dash) == ["o'neil&co@example.com"]
    page = dash.client.get(added.headers["location"])
    assert page.status_code == 200
    assert "o&#39;neil&amp;co@example.com added: it gets the form&#39;s mail once it" in page.text
    assert "o&#39;neil&amp;co@example.com" in page.text  # escaped
    assert 'aria-current="page">Mail</a>' in page.text  # the form's own tabs
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text  # the form's name, inert
    assert "<script>" not in page.text


def test_a_bad_address_is_said_and_kept_and_nothing_is_added(dash: Dashboard) -> None:
    dash.owner_signs_in()
    _add(dash, "team@example.com")

    hostile = dash.post(_mail(dash), email="<script>alert(2)</script>")
    twice = dash.post(_mail(dash), email="TEAM@example.com")
    long = dash.post(_mail(dash), email="a" * 250 + "@example.com")

    assert hostile.status_code == twice.status_code == long.status_code == 422
    assert "Email: not an email address" in hostile.text
    assert 'value="&lt;script&gt;alert(2)&lt;/script&gt;"' in hostile.text  # kept, inert
    assert "<script>alert(2)" not in hostile.text
    assert "already notified" in twice.text
    assert 'value="TEAM@example.com"' in twice.text
    assert "at most 254 characters" in long.text
    assert _recipients(dash) == ["team@example.com"]


def test_removing_asks_first(dash: Dashboard) -> None:
    dash.owner_signs_in()
    recipient_id = _add(dash, "team@example.com")

    asked = dash.post(_mail(dash) + "/remove", recipient=recipient_id)

    assert asked.status_code == 200
    assert 'name="confirm" value="yes"' in asked.text
    assert _recipients(dash) == ["team@example.com"]
    done = dash.post(_mail(dash) + "/remove", recipient=recipient_id, confirm="yes")
    assert dash.said(done) == "team@example.com removed: it gets no more of the form&#39;s mail."
    assert _recipients(dash) == []


def test_a_test_mail_reaches_the_recipient_through_the_relay(
    dash: Dashboard, smtp: SmtpServer
) -> None:
    dash.owner_signs_in()
    chosen = _add(dash, "team@example.com")
    _add(dash, "other@example.com")

    sent = dash.post(_mail(dash) + "/test", recipient=chosen)

    assert sent.status_code == 303
    location = sent.headers["location"]
    assert location.startswith(_mail(dash) + "?test=dlv_")
    queued = dash.client.get(location)
    assert "queued; the relay sends it on its next round" in queued.text
    _relay(dash, SmtpMailer(smtp.url))
    [mail] = smtp.messages
    assert mail.rcpt_tos == ("team@example.com",)
    assert mail.message["Subject"] == "Test mail from <script>alert(1)</script>"
    assert "This is a test from the form" in mail.raw.decode()
    shown = dash.client.get(location)
    assert f"Test mail to {isolated('team@example.com')}: accepted by the mail server" in shown.text
    deliveries = dash.svc.run(dash.svc.store.deliveries.list_deliveries)
    [delivery] = [d for d in deliveries if d.destination_id == chosen]
    record = dash.svc.run(dash.svc.store.deliveries.get_delivery, delivery.delivery_id)
    assert record is not None
    assert (record.event_type, record.delivery.state) == (
        EventType.MAIL_TEST,
        DeliveryState.DELIVERED,
    )


def test_without_a_mail_server_the_page_says_the_test_was_parked(dash: Dashboard) -> None:
    dash.owner_signs_in()
    chosen = _add(dash, "team@example.com")

    location = dash.post(_mail(dash) + "/test", recipient=chosen).headers["location"]
    _relay(dash, None)
    shown = dash.client.get(location)

    assert "No mail server is configured" in shown.text
    assert "not sent: " + isolated("no SMTP server is configured (INTAKE_SMTP_URL)") in shown.text
    # A delivery id of something else is not shown as a test mail.
    other = dash.client.get(_mail(dash), params={"test": "dlv_nope"})
    assert other.status_code == 200
    assert "Test mail to" not in other.text


def test_a_parked_test_mail_is_retried_once_a_mail_server_is_there(
    dash: Dashboard, smtp: SmtpServer
) -> None:
    dash.owner_signs_in()
    chosen = _add(dash, "team@example.com")
    location = dash.post(_mail(dash) + "/test", recipient=chosen).headers["location"]
    delivery_id = location.split("test=", 1)[1].split("#", 1)[0]
    _relay(dash, None)
    assert 'aria-label="Retry the test mail"' in dash.client.get(location).text

    retried = dash.post(_mail(dash) + "/retry", delivery=delivery_id)
    _relay(dash, SmtpMailer(smtp.url))
    shown = dash.client.get(retried.headers["location"])
    again = dash.post(_mail(dash) + "/retry", delivery=delivery_id)
    unknown = dash.post(_mail(dash) + "/retry", delivery="dlv_nope")

    assert retried.status_code == 303
    assert [m.rcpt_tos for m in smtp.messages] == [("team@example.com",)]
    assert "accepted by the mail server" in shown.text
    assert "Retry the test mail" not in shown.text
    assert again.status_code == 422  # delivered already: nothing to retry
    assert unknown.status_code == 404


def test_a_member_is_refused_and_nothing_changes(dash: Dashboard) -> None:
    recipient_id = _add(dash, "team@example.com")
    dash.set_password(dash.link("member@example.com", Role.MEMBER))

    answers = [
        dash.client.get(_mail(dash)),
        dash.post(_mail(dash), email="new@example.com"),
        dash.post(_mail(dash) + "/remove", recipient=recipient_id, confirm="yes"),
        dash.post(_mail(dash) + "/test", recipient=recipient_id),
    ]

    assert [a.status_code for a in answers] == [403] * 4
    assert "team@example.com" not in answers[0].text
    assert _recipients(dash) == ["team@example.com"]
    assert dash.svc.run(dash.svc.store.deliveries.list_deliveries) == []
    inbox = dash.client.get(f"/dashboard/forms/{dash.form.form_id}")
    assert "/settings/mail" not in inbox.text  # no tab to it


def test_another_workspaces_form_and_recipient_are_not_found(dash: Dashboard) -> None:
    other = dash.svc.workspace(name="Other")
    other_form = dash.svc.form(other.workspace_id)
    theirs = dash.svc.run(dash.svc.services.recipients.add, other_form.form_id, "them@example.com")
    dash.owner_signs_in()
    path = f"/dashboard/forms/{other_form.form_id}/settings/mail"

    answers = [
        dash.client.get(path),
        dash.post(path, email="new@example.com"),
        dash.post(_mail(dash) + "/remove", recipient=theirs.recipient_id, confirm="yes"),
        dash.post(_mail(dash) + "/test", recipient=theirs.recipient_id),
        dash.post(_mail(dash) + "/test", recipient="rcpt_nope"),
        dash.client.get("/dashboard/forms/frm_nope/settings/mail"),
    ]

    assert [a.status_code for a in answers] == [404] * 6
    assert dash.svc.run(dash.svc.services.recipients.all, other_form.form_id) == [theirs]
    assert dash.svc.run(dash.svc.store.deliveries.list_deliveries) == []


def test_a_recipient_of_another_form_is_not_found_under_this_one(dash: Dashboard) -> None:
    second = dash.svc.form(dash.workspace.workspace_id, name="Second")
    elsewhere = dash.svc.run(dash.svc.services.recipients.add, second.form_id, "x@example.com")
    dash.owner_signs_in()

    answer = dash.post(_mail(dash) + "/remove", recipient=elsewhere.recipient_id, confirm="yes")

    assert answer.status_code == 404
    assert len(dash.svc.run(dash.svc.services.recipients.all, second.form_id)) == 1


def test_csrf_and_another_site_are_refused_with_nothing_changed(dash: Dashboard) -> None:
    recipient_id = _add(dash, "team@example.com")
    anonymous = dash.client.get(_mail(dash))
    assert anonymous.status_code == 303
    dash.owner_signs_in()

    answers = [
        dash.client.post(_mail(dash), data={"email": "new@example.com"}),
        dash.post(_mail(dash), email="new@example.com", csrf="wrong"),
        dash.client.post(
            _mail(dash) + "/remove",
            data={"recipient": recipient_id, "confirm": "yes", "csrf": dash.csrf("/dashboard")},
            headers={"origin": "https://evil.example"},
        ),
        dash.client.post(_mail(dash) + "/test", data={"recipient": recipient_id}),
    ]

    assert [a.status_code for a in answers] == [403] * 4
    assert _recipients(dash) == ["team@example.com"]
    assert dash.svc.run(dash.svc.store.deliveries.list_deliveries) == []


def test_the_pages_are_not_kept(dash: Dashboard) -> None:
    dash.owner_signs_in()
    page = dash.client.get(_mail(dash))
    assert page.headers["cache-control"] == "no-store"
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert re.search(r'<label for="recipient-email">', page.text)
