"""A recipient who never asked receives nothing but one mail asking them to confirm: over
the management API and the dashboard, an added address is `pending`, gets that one mail
through the real relay (no submission, no test), and only once its owner confirms on the
page the link opens (a GET answers nothing: mail scanners fetch links) does it get
submissions. Declining stops everything; a link answers once. A signed-in member's own
address is confirmed at once."""

from __future__ import annotations

import re
from typing import Any

import httpx2
import pytest

from intake.adapters.mail_smtp import SmtpMailer
from intake.adapters.memory.senders import FakeWebhookSender
from intake.domain.consent_mail import SUBJECT
from intake.domain.model import Scope
from intake.service.relay import Relay
from tests.http.conftest import (
    Seeded,
    ServiceFactory,
)
from tests.http.dashboard_support import Dashboard
from tests.support.smtp_server import SmtpServer

STRANGER = "stranger@example.com"
LINK = re.compile(r"http://testserver(/dashboard/notifications/[A-Za-z0-9]+)")
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


class Owner:
    def __init__(self, seeded: Seeded, smtp: SmtpServer) -> None:
        self.svc = seeded.svc
        self.smtp = smtp
        self.form = seeded.form
        key = self.svc.run(
            self.svc.services.keys.create,
            seeded.workspace.workspace_id,
            scopes=frozenset({Scope.MANAGE}),
        )
        self.headers = {"authorization": f"Bearer {key.secret}"}
        self.relay = Relay(
            self.svc.store,
            FakeWebhookSender(),
            SmtpMailer(smtp.url),
            self.svc.clock,
            base_url="http://testserver",
        )

    def request(self, method: str, path: str, **options: Any) -> httpx2.Response:
        return self.svc.client.request(method, path, headers=self.headers, **options)

    def add(self, email: str = STRANGER) -> dict[str, Any]:
        answer = self.request(
            "POST", f"/v1/forms/{self.form.form_id}/notifications", json={"email": email}
        )
        assert answer.status_code == 201, answer.text
        found: dict[str, Any] = answer.json()
        return found

    def submit_and_relay(self) -> None:
        answer = self.svc.public(self.form.public_form_key, json={"message": "Hello"})
        assert answer.status_code == 201, answer.text
        self.svc.run(self.relay.run_once)

    def mails_to(self, address: str = STRANGER) -> list[Any]:
        return [m.message for m in self.smtp.messages if m.rcpt_tos == (address,)]

    def link(self) -> str:
        [asking] = self.mails_to()
        body = asking.get_body(("plain",))
        assert body is not None
        found = LINK.search(body.get_content())
        assert found is not None
        return found.group(1)

    def answer(self, link: str, choice: str) -> httpx2.Response:
        page = self.svc.client.get(link)
        token = CSRF.search(page.text)
        assert token is not None
        return self.svc.client.post(link, data={"csrf": token.group(1), "answer": choice})

    def status(self, recipient_id: str) -> str:
        listed = self.request("GET", f"/v1/forms/{self.form.form_id}/notifications")
        [found] = [r for r in listed.json()["data"] if r["recipient_id"] == recipient_id]
        return str(found["status"])


@pytest.fixture
def owner(seeded: Seeded, smtp: SmtpServer) -> Owner:
    return Owner(seeded, smtp)


def test_a_new_address_gets_one_mail_asking_and_nothing_else(owner: Owner) -> None:
    added = owner.add()
    owner.svc.run(owner.relay.run_once)
    owner.submit_and_relay()
    test = owner.request("POST", f"/v1/notifications/{added['recipient_id']}/test")

    assert added["status"] == "pending"
    [asking] = owner.mails_to()
    assert asking["Subject"] == SUBJECT
    assert test.status_code == 422, test.text
    assert "recipient_id" in test.json()["error"]["fields"]
    owner.svc.run(owner.relay.run_once)
    assert len(owner.mails_to()) == 1


def test_confirming_on_the_page_starts_the_mail_and_a_fetch_alone_does_not(
    owner: Owner,
) -> None:
    added = owner.add()
    owner.svc.run(owner.relay.run_once)
    link = owner.link()

    fetched = owner.svc.client.get(link)

    assert fetched.status_code == 200
    assert "Confirm: send me these mails" in fetched.text
    assert owner.status(added["recipient_id"]) == "pending"

    confirmed = owner.answer(link, "confirm")
    again = owner.svc.client.get(link)
    owner.submit_and_relay()

    assert confirmed.status_code == 200
    assert "Confirmed" in confirmed.text
    assert owner.status(added["recipient_id"]) == "confirmed"
    assert again.status_code == 410
    assert [m["Subject"] for m in owner.mails_to()][1:] == ["New submission to Contact"]


def test_declining_stops_everything(owner: Owner) -> None:
    added = owner.add()
    owner.svc.run(owner.relay.run_once)

    declined = owner.answer(owner.link(), "decline")
    owner.submit_and_relay()

    assert declined.status_code == 200
    assert "Declined" in declined.text
    assert owner.status(added["recipient_id"]) == "declined"
    assert len(owner.mails_to()) == 1


def test_an_unknown_link_is_gone(owner: Owner) -> None:
    assert owner.svc.client.get("/dashboard/notifications/nope").status_code == 410


def test_a_signed_in_owners_own_address_is_confirmed_at_once(
    make_service: ServiceFactory,
) -> None:
    dash = Dashboard(make_service())
    dash.owner_signs_in()  # owner@example.com, with a password set through its link
    mail = f"/dashboard/forms/{dash.form.form_id}/settings/mail"

    dash.post(mail, email="owner@example.com")
    dash.post(mail, email=STRANGER)

    svc = dash.svc
    found = {
        r.email: r.status.value for r in svc.run(svc.services.recipients.all, dash.form.form_id)
    }
    assert found == {"owner@example.com": "confirmed", STRANGER: "pending"}
    page = dash.client.get(mail)
    assert "Waiting for the address to confirm" in page.text
    # One mail queued, asking the stranger; none for the owner.
    assert len(svc.run(svc.store.deliveries.list_deliveries)) == 1


def test_adding_and_removing_one_address_again_and_again_stops_at_ten_an_hour(
    owner: Owner,
) -> None:
    for _ in range(10):
        added = owner.add()
        removed = owner.request("DELETE", f"/v1/notifications/{added['recipient_id']}")
        assert removed.status_code == 204

    refused = owner.request(
        "POST", f"/v1/forms/{owner.form.form_id}/notifications", json={"email": STRANGER}
    )
    listed = owner.request("GET", f"/v1/forms/{owner.form.form_id}/notifications")

    assert refused.status_code == 429, refused.text
    assert int(refused.headers["retry-after"]) > 0
    assert refused.json()["error"]["code"] == "rate_limited"
    assert listed.json()["data"] == []  # the refused add left nothing behind
