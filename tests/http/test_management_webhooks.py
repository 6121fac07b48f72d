"""The management API's submission detail, webhooks, deliveries and notification
recipients over HTTP, on every backend: what each operation answers and changes, and
each refusal of bad input (who may call them at all is test_management_access.py's)."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest
from standardwebhooks import Webhook

from intake.adapters.memory.senders import FakeWebhookSender
from intake.domain.deliveries import DeliveryState, DestinationKind
from intake.domain.model import Scope
from intake.service.relay import Relay
from tests.http.conftest import (
    Seeded,
    Service,
    assert_error,
)
from tests.support.names import own_private_name

HOOK = "https://hooks.example.com/intake"
LEASE = timedelta(minutes=2)


class Owner:
    """A workspace with a form, a manage key, a webhook endpoint, a mail recipient and one
    accepted submission fanned out to both."""

    def __init__(self, seeded: Seeded) -> None:
        svc = self.svc = seeded.svc
        self.workspace_id = seeded.workspace.workspace_id
        self.form_id = seeded.form.form_id
        created = svc.run(
            svc.services.keys.create, self.workspace_id, scopes=frozenset({Scope.MANAGE})
        )
        self.headers = {"authorization": f"Bearer {created.secret}"}
        self.endpoint = svc.run(svc.services.webhooks.add, self.form_id, HOOK)
        self.recipient = svc.run(svc.services.recipients.add, self.form_id, "owner@example.com")
        submitter = svc.run(
            svc.services.keys.create, self.workspace_id, scopes=frozenset({Scope.SUBMIT})
        )
        answer = svc.server(self.form_id, submitter.secret, json={"message": "Hello"})
        assert answer.status_code == 201, answer.text
        self.submission_id: str = answer.json()["submission_id"]
        svc.run(svc.store.deliveries.fan_out, svc.clock.now(), 100)

    @property
    def endpoint_id(self) -> str:
        return self.endpoint.endpoint.endpoint_id

    def request(self, method: str, path: str, **options: Any) -> httpx2.Response:
        return self.svc.client.request(method, path, headers=self.headers, **options)

    def webhook_delivery(self) -> str:
        deliveries = self.svc.run(self.svc.store.deliveries.list_deliveries)
        [found] = [d for d in deliveries if d.destination_id == self.endpoint_id]
        return found.delivery_id

    def claim_and_fail(self, delivery_id: str, *, dead: bool) -> None:
        svc = self.svc
        now = svc.clock.now()
        svc.run(svc.store.deliveries.claim_due, now, LEASE, 100)
        later = None if dead else now + LEASE
        svc.run(svc.store.deliveries.record_failure, delivery_id, now, "HTTP 500", later, 500)


@pytest.fixture
def owner(seeded: Seeded) -> Owner:
    return Owner(seeded)


def fields(response: httpx2.Response) -> dict[str, str]:
    body = assert_error(response, "validation_failed")
    found: dict[str, str] = body["error"]["fields"]
    return found


# GET /v1/submissions/{submission_id}


def test_a_submission_comes_with_its_score_and_deliveries_and_their_attempts(
    owner: Owner,
) -> None:
    delivery_id = owner.webhook_delivery()
    owner.claim_and_fail(delivery_id, dead=False)

    answer = owner.request("GET", f"/v1/submissions/{owner.submission_id}")

    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["submission_id"] == owner.submission_id
    assert body["data"] == {"message": "Hello"}
    assert isinstance(body["spam_score"], float | int)
    kinds = {d["kind"]: d for d in body["deliveries"]}
    assert set(kinds) == {"webhook", "email"}
    webhook = kinds["webhook"]
    assert (webhook["delivery_id"], webhook["attempts"], webhook["event_type"]) == (
        delivery_id,
        1,
        "submission.created",
    )
    [attempt] = webhook["attempt_log"]
    assert (attempt["outcome"], attempt["status_code"], attempt["error"]) == (
        "failed",
        500,
        "HTTP 500",
    )
    assert HOOK not in answer.text  # never the destination's URL
    assert kinds["email"]["attempt_log"] == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/submissions/{}"),
        ("GET", "/v1/webhooks/{}/deliveries"),
        ("POST", "/v1/webhooks/{}/test"),
        ("DELETE", "/v1/webhooks/{}"),
        ("POST", "/v1/deliveries/{}/retry"),
        ("POST", "/v1/webhooks/{}/retry-dead"),
        ("DELETE", "/v1/notifications/{}"),
        ("GET", "/v1/forms/{}/webhooks"),
        ("GET", "/v1/forms/{}/notifications"),
    ],
)
def test_an_id_of_any_shape_is_not_found(owner: Owner, method: str, path: str) -> None:
    for weird in ("sub_missing", "%00", "x" * 300, "..%2F..%2Fetc", "%C3%A9", "%0A"):
        answer = owner.request(method, path.format(weird))
        assert answer.status_code == 404, weird


# Webhooks: list, add, remove


def test_an_added_webhook_shows_its_secret_once(owner: Owner) -> None:
    path = f"/v1/forms/{owner.form_id}/webhooks"

    added = owner.request("POST", path, json={"url": "https://b.example.com/h"})
    listed = owner.request("GET", path)

    assert added.status_code == 201, added.text
    body = added.json()
    assert body["secret"].startswith("whsec_")
    assert (body["url"], body["include_flagged"], body["enabled"]) == (
        "https://b.example.com/h",
        False,
        True,
    )
    assert listed.status_code == 200
    page = listed.json()
    assert page["next_cursor"] is None
    assert {e["endpoint_id"] for e in page["data"]} == {owner.endpoint_id, body["endpoint_id"]}
    assert "whsec_" not in listed.text
    flagged = owner.request(
        "POST", path, json={"url": "https://c.example.com/h", "include_flagged": True}
    )
    assert flagged.json()["include_flagged"] is True


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "url"),
        ({"url": 7}, "url"),
        ({"url": None}, "url"),
        ({"url": "http://hooks.example.com/plain"}, "url"),
        ({"url": "https://127.0.0.1/hook"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": "https://h.example.com/" + "a" * 3000}, "url"),
        ({"url": HOOK, "include_flagged": "yes"}, "include_flagged"),
        ({"url": HOOK, "secret": "whsec_mine"}, "secret"),
    ],
)
def test_a_bad_webhook_is_refused_naming_the_field(
    owner: Owner, body: dict[str, Any], field: str
) -> None:
    answer = owner.request("POST", f"/v1/forms/{owner.form_id}/webhooks", json=body)

    assert field in fields(answer)
    assert len(owner.svc.run(owner.svc.services.webhooks.all, owner.form_id)) == 1


@pytest.mark.parametrize(
    "url",
    [
        "https://[fec0::1]/hook?token=s3cret",
        "https://[fec0::1]:8443/hook?token=s3cret",
        "https://[feff:ffff::1]/hook?token=s3cret",
    ],
)
def test_a_site_local_address_is_refused(owner: Owner, url: str) -> None:
    answer = owner.request("POST", f"/v1/forms/{owner.form_id}/webhooks", json={"url": url})

    assert "not a public address" in fields(answer)["url"]
    assert len(owner.svc.run(owner.svc.services.webhooks.all, owner.form_id)) == 1


def test_a_refusal_never_says_what_a_private_name_resolves_to(owner: Owner) -> None:
    name = own_private_name()
    resolved = {str(info[4][0]) for info in socket.getaddrinfo(name, 443)}
    url = f"https://{name}/hook?token=s3cret"

    answer = owner.request("POST", f"/v1/forms/{owner.form_id}/webhooks", json={"url": url})

    said = fields(answer)["url"]
    assert f"{name.lower()} resolves to an address that is not public" in said
    assert not [address for address in resolved if address in answer.text]
    assert "s3cret" not in answer.text


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/in?token=s3cret#\\x",
        "ftp://hooks.example.com/in?token=s3cret",
        "https://hooks.example.com:99999/in?token=s3cret",
        "http://127.0.0.1/in?token=s3cret",
    ],
)
def test_a_refused_webhook_url_is_never_repeated(owner: Owner, url: str) -> None:
    answer = owner.request("POST", f"/v1/forms/{owner.form_id}/webhooks", json={"url": url})

    assert fields(answer)["url"]
    assert "s3cret" not in answer.text
    assert "/in" not in answer.text


def test_a_second_webhook_at_the_same_url_is_refused(owner: Owner) -> None:
    # Two endpoints at one URL would have every event delivered twice.
    path = f"/v1/forms/{owner.form_id}/webhooks"
    again = HOOK.replace("https://", "HTTPS://", 1)

    answer = owner.request("POST", path, json={"url": again, "include_flagged": True})

    assert fields(answer) == {"url": "this form has an endpoint at this URL already"}
    assert [e.url for e in owner.svc.run(owner.svc.services.webhooks.all, owner.form_id)] == [HOOK]
    other = owner.request("POST", path, json={"url": HOOK + "/other"})
    assert other.status_code == 201, other.text


def test_an_unknown_field_is_named_with_the_bad_ones(owner: Owner) -> None:
    body = {"url": 7, "include_flagged": "yes", "secret": "whsec_mine"}

    answer = owner.request("POST", f"/v1/forms/{owner.form_id}/webhooks", json=body)

    assert set(fields(answer)) == {"url", "include_flagged", "secret"}
    assert fields(answer)["secret"] == "Unknown field."


def test_a_webhook_body_that_is_not_json_is_refused(owner: Owner) -> None:
    path = f"/v1/forms/{owner.form_id}/webhooks"
    assert_error(owner.request("POST", path, content=b"{nope"), "unsupported_content_type")
    typed = {**owner.headers, "content-type": "application/json"}
    bad = owner.svc.client.post(path, content=b"{nope", headers=typed)
    assert_error(bad, "malformed_request")
    listed = owner.svc.client.post(path, content=b"[1]", headers=typed)
    assert_error(listed, "malformed_request")


def test_removing_a_webhook_drops_its_undelivered_deliveries(owner: Owner) -> None:
    delivery_id = owner.webhook_delivery()

    removed = owner.request("DELETE", f"/v1/webhooks/{owner.endpoint_id}")
    again = owner.request("DELETE", f"/v1/webhooks/{owner.endpoint_id}")

    assert removed.status_code == 204
    assert removed.content == b""
    assert again.status_code == 404
    left = owner.svc.run(owner.svc.store.deliveries.list_deliveries)
    assert delivery_id not in {d.delivery_id for d in left}
    assert [d.kind for d in left] == [DestinationKind.EMAIL]


# Test events


def test_a_test_event_is_queued_for_that_endpoint_only(owner: Owner) -> None:
    other = owner.svc.run(owner.svc.services.webhooks.add, owner.form_id, "https://b.example.com/h")
    before = len(owner.svc.run(owner.svc.store.deliveries.list_deliveries))

    answer = owner.request("POST", f"/v1/webhooks/{owner.endpoint_id}/test")

    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert (body["event_type"], body["destination_id"], body["state"]) == (
        "webhook.test",
        owner.endpoint_id,
        "pending",
    )
    assert (body["submission_id"], body["attempts"], body["attempt_log"]) == (None, 0, [])
    after = owner.svc.run(owner.svc.store.deliveries.list_deliveries)
    assert len(after) == before + 1
    assert other.endpoint.endpoint_id not in {
        d.destination_id for d in after if d.event_id == body["event_id"]
    }


# Also on PostgreSQL: the relay's claim (SKIP LOCKED) and its fan-out.
@pytest.mark.postgres_smoke
def test_a_test_event_goes_through_the_relay_to_that_endpoint_only_signed(
    owner: Owner,
) -> None:
    svc = owner.svc
    path = f"/v1/forms/{owner.form_id}/webhooks"
    added = owner.request("POST", path, json={"url": "https://b.example.com/h"}).json()
    owner.request("POST", path, json={"url": "https://c.example.com/h", "include_flagged": True})
    sender = FakeWebhookSender()
    relay = Relay(svc.store, sender, None, svc.clock)
    svc.run(relay.run_once)  # the submission's deliveries, made before the two were added
    sender.sent.clear()

    queued = owner.request("POST", f"/v1/webhooks/{added['endpoint_id']}/test").json()
    totals = svc.run(relay.run_once)
    listed = owner.request("GET", f"/v1/webhooks/{added['endpoint_id']}/deliveries").json()

    assert (totals.fanned_out, totals.delivered, totals.dead) == (0, 1, 0)
    [sent] = sender.sent
    assert sent.url == "https://b.example.com/h"
    # Signed as Standard Webhooks' reference signs, at the (fake) time it was sent.
    moment = datetime.fromtimestamp(int(sent.headers["webhook-timestamp"]), tz=UTC)
    expected = Webhook(added["secret"]).sign(sent.webhook_id, moment, sent.body.decode())
    assert sent.headers["webhook-signature"] == expected
    assert sent.payload() == {
        "type": "webhook.test",
        "endpoint_id": added["endpoint_id"],
        "form_id": owner.form_id,
        "workspace_id": owner.workspace_id,
        "created_at": svc.clock.now().isoformat(),
    }
    assert sent.webhook_id == queued["event_id"]
    [delivery] = listed["data"]
    assert (delivery["delivery_id"], delivery["state"]) == (queued["delivery_id"], "delivered")
    [attempt] = delivery["attempt_log"]
    assert (attempt["outcome"], attempt["status_code"], attempt["error"]) == (
        "delivered",
        200,
        None,
    )


def test_a_disabled_endpoint_cannot_be_tested(owner: Owner) -> None:
    svc = owner.svc
    svc.run(svc.store.destinations.disable_endpoint, owner.endpoint_id, svc.clock.now())

    answer = owner.request("POST", f"/v1/webhooks/{owner.endpoint_id}/test")

    assert "endpoint_id" in fields(answer)


# Deliveries of an endpoint


def test_an_endpoints_deliveries_are_paged_newest_first(owner: Owner) -> None:
    for _ in range(3):
        owner.svc.clock.advance(61)  # tests to one endpoint: one a minute
        assert owner.request("POST", f"/v1/webhooks/{owner.endpoint_id}/test").status_code == 202
    path = f"/v1/webhooks/{owner.endpoint_id}/deliveries"

    seen: list[str] = []
    answer = owner.request("GET", path, params={"limit": 3})
    while True:
        assert answer.status_code == 200, answer.text
        page = answer.json()
        seen += [d["delivery_id"] for d in page["data"]]
        if page["next_cursor"] is None:
            break
        answer = owner.request("GET", path, params={"limit": 3, "cursor": page["next_cursor"]})
    everything = owner.request("GET", path).json()["data"]

    assert len(seen) == 4 == len(set(seen))
    assert seen == [d["delivery_id"] for d in everything]
    created = [d["created_at"] for d in everything]
    assert created == sorted(created, reverse=True)
    assert everything[-1]["event_type"] == "submission.created"


def test_an_endpoints_deliveries_are_filtered_by_state(owner: Owner) -> None:
    delivery_id = owner.webhook_delivery()
    owner.claim_and_fail(delivery_id, dead=True)
    owner.request("POST", f"/v1/webhooks/{owner.endpoint_id}/test")
    path = f"/v1/webhooks/{owner.endpoint_id}/deliveries"

    dead = owner.request("GET", path, params={"state": "dead"}).json()["data"]
    pending = owner.request("GET", path, params={"state": "pending"}).json()["data"]
    delivered = owner.request("GET", path, params={"state": "delivered"}).json()["data"]

    assert [d["delivery_id"] for d in dead] == [delivery_id]
    assert dead[0]["attempt_log"][0]["status_code"] == 500
    assert [d["event_type"] for d in pending] == ["webhook.test"]
    assert delivered == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("state=lost", "state"),
        ("state=dead&state=pending", "state"),
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=ten", "limit"),
        ("cursor=bm90IGEgY3Vyc29y", "cursor"),
        ("cursor=%00", "cursor"),
        ("cursor=" + "a" * 300, "cursor"),
    ],
)
def test_a_bad_deliveries_query_is_refused_naming_it(owner: Owner, query: str, field: str) -> None:
    answer = owner.request("GET", f"/v1/webhooks/{owner.endpoint_id}/deliveries?{query}")

    assert field in fields(answer)


# Retrying one delivery


def test_a_dead_delivery_retried_is_due_now_counted_afresh(owner: Owner) -> None:
    delivery_id = owner.webhook_delivery()
    owner.claim_and_fail(delivery_id, dead=True)
    owner.svc.clock.advance(60)

    answer = owner.request("POST", f"/v1/deliveries/{delivery_id}/retry")

    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert (body["state"], body["attempts"], body["dead_at"]) == ("pending", 0, None)
    assert body["next_attempt_at"] == owner.svc.clock.now().isoformat()
    assert len(body["attempt_log"]) == 1  # the history stays


def test_a_delivered_delivery_cannot_be_retried(owner: Owner) -> None:
    svc = owner.svc
    delivery_id = owner.webhook_delivery()
    svc.run(svc.store.deliveries.record_success, delivery_id, svc.clock.now(), 200)

    answer = owner.request("POST", f"/v1/deliveries/{delivery_id}/retry")

    assert "delivery_id" in fields(answer)
    [kept] = [
        d for d in svc.run(svc.store.deliveries.list_deliveries) if d.delivery_id == delivery_id
    ]
    assert kept.state is DeliveryState.DELIVERED


def test_retrying_an_endpoints_dead_deliveries_makes_only_those_due(owner: Owner) -> None:
    svc = owner.svc
    dead = owner.webhook_delivery()
    other = svc.run(svc.services.webhooks.add, owner.form_id, HOOK + "/other").endpoint.endpoint_id
    others = svc.run(svc.services.webhooks.test, other).delivery.delivery_id
    for delivery_id in (dead, others):
        owner.claim_and_fail(delivery_id, dead=True)
    delivered = svc.run(svc.services.webhooks.test, owner.endpoint_id).delivery.delivery_id
    svc.run(svc.store.deliveries.record_success, delivered, svc.clock.now(), 200)
    svc.clock.advance(60)

    answer = owner.request("POST", f"/v1/webhooks/{owner.endpoint_id}/retry-dead")
    again = owner.request("POST", f"/v1/webhooks/{owner.endpoint_id}/retry-dead")

    assert answer.status_code == 202, answer.text
    assert answer.json() == {"endpoint_id": owner.endpoint_id, "retried": 1}
    assert again.json() == {"endpoint_id": owner.endpoint_id, "retried": 0}
    states = {
        d.delivery_id: (d.state, d.attempts, d.next_attempt_at)
        for d in svc.run(svc.store.deliveries.list_deliveries)
        if d.kind is DestinationKind.WEBHOOK
    }
    assert states[dead] == (DeliveryState.PENDING, 0, svc.clock.now())
    assert states[others][0] is DeliveryState.DEAD
    assert states[delivered][0] is DeliveryState.DELIVERED


# Notification recipients


def test_recipients_are_added_listed_and_removed(owner: Owner) -> None:
    path = f"/v1/forms/{owner.form_id}/notifications"

    added = owner.request("POST", path, json={"email": "sales@example.com"})
    listed = owner.request("GET", path)
    removed = owner.request("DELETE", f"/v1/notifications/{owner.recipient.recipient_id}")
    again = owner.request("DELETE", f"/v1/notifications/{owner.recipient.recipient_id}")

    assert added.status_code == 201, added.text
    assert added.json()["email"] == "sales@example.com"
    assert sorted(r["email"] for r in listed.json()["data"]) == [
        "owner@example.com",
        "sales@example.com",
    ]
    assert listed.json()["next_cursor"] is None
    assert removed.status_code == 204
    assert again.status_code == 404
    left = owner.request("GET", path).json()["data"]
    assert [r["email"] for r in left] == ["sales@example.com"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "email"),
        ({"email": 5}, "email"),
        ({"email": "not-an-address"}, "email"),
        ({"email": "OWNER@example.com"}, "email"),  # already notified
        ({"email": "a@example.com", "name": "Ops"}, "name"),
    ],
)
def test_a_bad_recipient_is_refused_naming_the_field(
    owner: Owner, body: dict[str, Any], field: str
) -> None:
    answer = owner.request("POST", f"/v1/forms/{owner.form_id}/notifications", json=body)

    assert field in fields(answer)
    assert len(owner.svc.run(owner.svc.services.recipients.all, owner.form_id)) == 1


def test_a_test_mail_is_queued_for_that_recipient_only_and_parked_without_smtp(
    owner: Owner,
) -> None:
    svc = owner.svc
    other = svc.run(svc.services.recipients.add, owner.form_id, "other@example.com")
    before = len(svc.run(svc.store.deliveries.list_deliveries))

    answer = owner.request("POST", f"/v1/notifications/{owner.recipient.recipient_id}/test")
    svc.run(Relay(svc.store, FakeWebhookSender(), None, svc.clock).run_once)
    missing = owner.request("POST", "/v1/notifications/rcpt_missing0000000000/test")

    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert (body["event_type"], body["kind"], body["destination_id"], body["state"]) == (
        "mail.test",
        "email",
        owner.recipient.recipient_id,
        "pending",
    )
    assert (body["submission_id"], body["attempts"]) == (None, 0)
    after = svc.run(svc.store.deliveries.list_deliveries)
    assert len(after) == before + 1
    assert other.recipient_id not in {
        d.destination_id for d in after if d.event_id == body["event_id"]
    }
    record = svc.run(svc.store.deliveries.get_delivery, body["delivery_id"])
    assert record is not None
    assert (record.delivery.state, record.delivery.last_error) == (
        DeliveryState.DEAD,
        "no SMTP server is configured (INTAKE_SMTP_URL)",
    )
    assert missing.status_code == 404


def test_a_read_key_reads_but_cannot_test_or_retry(owner: Owner, svc: Service) -> None:
    reader = svc.run(svc.services.keys.create, owner.workspace_id, scopes=frozenset({Scope.READ}))
    headers = {"authorization": f"Bearer {reader.secret}"}
    delivery_id = owner.webhook_delivery()

    listed = svc.client.get(f"/v1/webhooks/{owner.endpoint_id}/deliveries", headers=headers)
    tested = svc.client.post(f"/v1/webhooks/{owner.endpoint_id}/test", headers=headers)
    retried = svc.client.post(f"/v1/deliveries/{delivery_id}/retry", headers=headers)
    all_dead = svc.client.post(f"/v1/webhooks/{owner.endpoint_id}/retry-dead", headers=headers)

    assert listed.status_code == 200
    assert (tested.status_code, retried.status_code, all_dead.status_code) == (403, 403, 403)


TOKENED = "https://hooks.example.com:8443/services/T0KEN/in?token=s3cret"


def test_a_read_key_sees_a_webhook_url_as_its_scheme_and_host_only(
    owner: Owner, svc: Service
) -> None:
    added = owner.request("POST", f"/v1/forms/{owner.form_id}/webhooks", json={"url": TOKENED})
    reader = svc.run(svc.services.keys.create, owner.workspace_id, scopes=frozenset({Scope.READ}))

    listed = svc.client.get(
        f"/v1/forms/{owner.form_id}/webhooks",
        headers={"authorization": f"Bearer {reader.secret}"},
    )

    assert listed.status_code == 200, listed.text
    shown = {e["endpoint_id"]: e for e in listed.json()["data"]}
    mine = shown[added.json()["endpoint_id"]]
    assert (mine["url"], mine["url_redacted"]) == ("https://hooks.example.com:8443/…", True)
    assert shown[owner.endpoint_id]["url"] == "https://hooks.example.com/…"
    assert "T0KEN" not in listed.text
    assert "s3cret" not in listed.text


def test_a_manage_key_sees_a_webhook_url_in_full(owner: Owner) -> None:
    owner.request("POST", f"/v1/forms/{owner.form_id}/webhooks", json={"url": TOKENED})

    listed = owner.request("GET", f"/v1/forms/{owner.form_id}/webhooks")

    shown = {(e["url"], e["url_redacted"]) for e in listed.json()["data"]}
    assert shown == {(TOKENED, False), (HOOK, False)}


@pytest.mark.parametrize("kind", ["webhooks", "notifications"])
def test_a_forms_destinations_are_paged_newest_first_by_the_cursor(owner: Owner, kind: str) -> None:
    path = f"/v1/forms/{owner.form_id}/{kind}"
    for n in range(3):
        owner.svc.clock.advance(1)
        body = (
            {"url": f"https://hooks{n}.example.com/in"}
            if kind == "webhooks"
            else {"email": f"team{n}@example.com"}
        )
        assert owner.request("POST", path, json=body).status_code == 201

    first = owner.request("GET", path, params={"limit": 3}).json()
    second = owner.request("GET", path, params={"limit": 3, "cursor": first["next_cursor"]}).json()
    refused = owner.request("GET", path, params={"cursor": "not-a-cursor"})
    too_many = owner.request("GET", path, params={"limit": 201})

    key = "endpoint_id" if kind == "webhooks" else "recipient_id"
    ids = [item[key] for item in first["data"] + second["data"]]
    assert len(first["data"]) == 3
    assert first["next_cursor"] is not None
    assert len(second["data"]) == 1
    assert second["next_cursor"] is None
    # The one made when the test began is the oldest, so the last.
    seeded = owner.endpoint_id if kind == "webhooks" else owner.recipient.recipient_id
    assert ids[-1] == seeded
    assert len(set(ids)) == 4
    assert fields(refused).keys() == {"cursor"}
    assert fields(too_many).keys() == {"limit"}
