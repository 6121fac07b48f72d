"""`intake webhook`, `intake notify`, `intake outbox` and `intake relay --once`, called
in-process on a SQLite file, with a real local webhook receiver and SMTP server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook
from starlette.testclient import TestClient

from intake.config import Settings
from intake.library_runtime import open_runtime
from tests.cli.conftest import Cli, submit
from tests.support.names import own_private_name
from tests.support.receiver import Receiver
from tests.support.smtp_server import SmtpServer


@pytest.fixture
def form(cli: Cli) -> dict[str, str]:
    workspace = cli.json("workspace", "create", "--name", "Acme")
    created = cli.json(
        "form", "create", "--workspace", workspace["workspace_id"], "--name", "Contact"
    )
    return {"form_id": created["form_id"], "public_form_key": created["public_form_key"]}


@pytest.fixture
def private_allowed(monkeypatch: pytest.MonkeyPatch, database_url: str) -> None:
    # The receiver listens on 127.0.0.1 over plain http.
    monkeypatch.setenv("INTAKE_WEBHOOK_ALLOW_PRIVATE", "true")


@pytest.fixture
def smtp(monkeypatch: pytest.MonkeyPatch, database_url: str) -> Iterator[SmtpServer]:
    with SmtpServer() as running:
        monkeypatch.setenv("INTAKE_SMTP_URL", running.url)
        yield running


# intake webhook


def test_webhook_add_prints_the_endpoint_and_its_secret_once(
    cli: Cli, form: dict[str, str]
) -> None:
    added = cli.json(
        "webhook", "add", "--form", form["form_id"], "--url", "https://h.example.com/x"
    )
    listed = cli("webhook", "list", "--form", form["form_id"], "--json")

    assert added["endpoint_id"].startswith("wh_")
    assert added["secret"].startswith("whsec_")
    assert added["include_flagged"] is False
    assert added["enabled"] is True
    assert listed.code == 0
    assert [e["endpoint_id"] for e in listed.document["endpoints"]] == [added["endpoint_id"]]
    assert listed.document["endpoints"][0]["url"] == "https://h.example.com/x"
    assert added["secret"] not in listed.out, "the secret is shown only when added"
    assert "secret" not in listed.document["endpoints"][0]


def test_webhook_add_refuses_a_second_endpoint_at_the_same_url(
    cli: Cli, form: dict[str, str]
) -> None:
    url = "https://h.example.com/x?token=s3cret"
    cli.json("webhook", "add", "--form", form["form_id"], "--url", url)

    again = cli("webhook", "add", "--form", form["form_id"], "--url", url.replace("h.", "H.", 1))

    assert again.code == 1
    assert "this form has an endpoint at this URL already" in again.err
    assert "s3cret" not in again.err
    assert len(cli.json("webhook", "list", "--form", form["form_id"])["endpoints"]) == 1


def test_webhook_add_with_include_flagged(cli: Cli, form: dict[str, str]) -> None:
    added = cli.json(
        "webhook", "add", "--form", form["form_id"], "--url", "https://h.example.com/",
        "--include-flagged",
    )  # fmt: skip

    assert added["include_flagged"] is True


def test_webhook_add_without_json_shows_the_secret_and_says_so(
    cli: Cli, form: dict[str, str]
) -> None:
    result = cli("webhook", "add", "--form", form["form_id"], "--url", "https://h.example.com/")

    assert result.code == 0
    assert "secret=whsec_" in result.out
    assert "not shown again" in result.out


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://h.example.com/hook", "https"),
        ("https://127.0.0.1/hook", "not a public address"),
        ("https://10.1.2.3/hook", "not a public address"),
        ("https://[::1]/hook", "not a public address"),
        ("https://localhost:8443/hook", "not a public address"),
        ("ftp://h.example.com/hook", "absolute http(s) URL"),
        ("/relative/hook", "absolute http(s) URL"),
        ("https://h.example.com:99999/", "not a valid URL"),
    ],
)
def test_webhook_add_refuses_what_the_relay_would_not_call(
    cli: Cli, form: dict[str, str], url: str, reason: str
) -> None:
    result = cli("webhook", "add", "--form", form["form_id"], "--url", url, "--json")

    assert result.code == 1
    assert reason in result.document["error"]
    assert cli.json("webhook", "list", "--form", form["form_id"])["endpoints"] == []


@pytest.mark.parametrize(
    "url",
    [
        "https://127.1/hook",
        "https://0x7f000001/hook",
        "https://2130706433/hook",
        "https://0177.0.0.1/hook",
        "https://127.0.0.1./hook",
        "https://[::127.0.0.1]/hook",
        "https://[::ffff:7f00:1]/hook",
        "https://[64:ff9b::7f00:1]/hook",
        "https://localhost./hook",
        "https://LOCALHOST/hook",
        "https://api.localhost/hook",
    ],
)
def test_webhook_add_refuses_loopback_however_it_is_written(
    cli: Cli, form: dict[str, str], url: str
) -> None:
    result = cli("webhook", "add", "--form", form["form_id"], "--url", url, "--json")

    assert result.code == 1
    assert "not a public address" in result.document["error"]
    assert cli.json("webhook", "list", "--form", form["form_id"])["endpoints"] == []


def test_webhook_add_refuses_the_machines_own_name(cli: Cli, form: dict[str, str]) -> None:
    name = own_private_name()

    result = cli(
        "webhook", "add", "--form", form["form_id"], "--url", f"https://{name}/h", "--json"
    )

    assert result.code == 1
    assert f"{name.lower()} resolves to an address that is not public" in result.document["error"]


def test_webhook_add_takes_odd_loopback_when_private_is_allowed(
    cli: Cli, form: dict[str, str], private_allowed: None
) -> None:
    added = cli.json("webhook", "add", "--form", form["form_id"], "--url", "https://127.1/h")

    assert added["url"] == "https://127.1/h"


def test_webhook_add_takes_a_private_http_url_when_allowed(
    cli: Cli, form: dict[str, str], private_allowed: None
) -> None:
    added = cli.json("webhook", "add", "--form", form["form_id"], "--url", "http://127.0.0.1:9/h")

    assert added["url"] == "http://127.0.0.1:9/h"


def test_webhook_commands_refuse_unknown_ids(cli: Cli) -> None:
    add = cli("webhook", "add", "--form", "frm_nope", "--url", "https://h.example.com/", "--json")
    listing = cli("webhook", "list", "--form", "frm_nope", "--json")
    remove = cli("webhook", "remove", "wh_nope", "--json")

    assert (add.code, listing.code, remove.code) == (1, 1, 1)
    assert "no form 'frm_nope'" in add.document["error"]
    assert "no webhook endpoint 'wh_nope'" in remove.document["error"]


def test_webhook_remove(cli: Cli, form: dict[str, str]) -> None:
    added = cli.json("webhook", "add", "--form", form["form_id"], "--url", "https://h.example.com/")

    removed = cli.json("webhook", "remove", added["endpoint_id"])
    again = cli("webhook", "remove", added["endpoint_id"])

    assert removed == {"endpoint_id": added["endpoint_id"], "removed": True}
    assert cli.json("webhook", "list", "--form", form["form_id"])["endpoints"] == []
    assert again.code == 1


def test_webhook_add_needs_form_and_url(cli: Cli) -> None:
    assert cli("webhook", "add", "--url", "https://h.example.com/").code == 2
    assert cli("webhook", "add", "--form", "frm_x").code == 2


# intake notify


def test_notify_add_list_remove(cli: Cli, form: dict[str, str], smtp: SmtpServer) -> None:
    added = cli.json("notify", "add", "--form", form["form_id"], "--email", "owner@example.com")
    listed = cli.json("notify", "list", "--form", form["form_id"])
    removed = cli.json("notify", "remove", added["recipient_id"])
    after = cli.json("notify", "list", "--form", form["form_id"])

    assert added["email"] == "owner@example.com"
    assert added["recipient_id"].startswith("rcpt_")
    assert listed["recipients"] == [added]
    assert removed == {"recipient_id": added["recipient_id"], "removed": True}
    assert after["recipients"] == []


def test_notify_test_mails_that_recipient_only_through_the_relay(
    cli: Cli, form: dict[str, str], smtp: SmtpServer
) -> None:
    added = cli.json("notify", "add", "--form", form["form_id"], "--email", "owner@example.com")
    cli.json("notify", "add", "--form", form["form_id"], "--email", "other@example.com")

    queued = cli.json("notify", "test", added["recipient_id"])
    counts = cli.json("relay", "--once")
    missing = cli("notify", "test", "rcpt_missing", "--json")

    assert (queued["event_type"], queued["kind"], queued["state"]) == (
        "mail.test",
        "email",
        "pending",
    )
    assert queued["destination_id"] == added["recipient_id"]
    assert counts == {"delivered": 1, "failed": 0, "dead": 0, "fanned_out": 0}
    [mail] = smtp.messages
    assert mail.rcpt_tos == ("owner@example.com",)
    assert mail.message["Subject"] == "Test mail from Contact"
    assert missing.code == 1


def test_notify_test_without_smtp_warns_and_the_relay_parks_it(
    cli: Cli, form: dict[str, str]
) -> None:
    added = cli.json("notify", "add", "--form", form["form_id"], "--email", "owner@example.com")

    queued = cli("notify", "test", added["recipient_id"], "--json")
    counts = cli.json("relay", "--once")

    assert queued.code == 0
    assert "INTAKE_SMTP_URL is not set" in queued.err
    assert counts == {"delivered": 0, "failed": 0, "dead": 1, "fanned_out": 0}


def test_notify_add_refuses_a_bad_address_and_a_second_of_the_same(
    cli: Cli, form: dict[str, str]
) -> None:
    cli.json("notify", "add", "--form", form["form_id"], "--email", "owner@example.com")

    bad = cli("notify", "add", "--form", form["form_id"], "--email", "not an address", "--json")
    twice = cli("notify", "add", "--form", form["form_id"], "--email", "Owner@Example.com")

    assert bad.code == 1
    assert "not an email address" in bad.document["error"]
    assert twice.code == 1
    assert "already notified" in twice.err


def test_notify_add_without_smtp_warns_that_no_mail_can_go(cli: Cli, form: dict[str, str]) -> None:
    result = cli("notify", "add", "--form", form["form_id"], "--email", "owner@example.com")

    assert result.code == 0
    assert "INTAKE_SMTP_URL is not set" in result.err


def test_notify_commands_refuse_unknown_ids(cli: Cli) -> None:
    assert cli("notify", "add", "--form", "frm_x", "--email", "a@example.com").code == 1
    assert cli("notify", "list", "--form", "frm_x").code == 1
    assert cli("notify", "remove", "rcpt_x").code == 1


# intake relay --once and intake outbox


def test_relay_once_delivers_a_submission_to_the_webhook_signed(
    cli: Cli, form: dict[str, str], http: TestClient, private_allowed: None, receiver: Receiver
) -> None:
    added = cli.json("webhook", "add", "--form", form["form_id"], "--url", receiver.url())
    submission_id = submit(http, form["public_form_key"], {"email": "ada@example.com"})

    counts = cli.json("relay", "--once")
    again = cli.json("relay", "--once")

    assert counts == {"delivered": 1, "failed": 0, "dead": 0, "fanned_out": 1}
    assert again == {"delivered": 0, "failed": 0, "dead": 0, "fanned_out": 0}
    (request,) = receiver.requests
    payload = Webhook(added["secret"]).verify(request.body, dict(request.headers))
    assert payload["submission_id"] == submission_id
    assert payload["type"] == "submission.created"
    assert payload["data"] == {"email": "ada@example.com"}
    (delivery,) = cli.json("outbox", "list")["deliveries"]
    assert delivery["state"] == "delivered"
    assert delivery["event_id"] == request.headers["webhook-id"]
    assert delivery["destination_id"] == added["endpoint_id"]


@pytest.mark.usefixtures("private_allowed")
def test_a_relay_started_late_sends_destinations_added_meanwhile_no_backlog(
    cli: Cli, form: dict[str, str], http: TestClient, receiver: Receiver, smtp: SmtpServer
) -> None:
    # As after `make run`: submissions came in while no relay ran; then the owner adds
    # a webhook and a recipient, submits once more, and starts the relay.
    for n in range(3):
        submit(http, form["public_form_key"], {"email": f"old{n}@example.com"})
    cli.json("webhook", "add", "--form", form["form_id"], "--url", receiver.url())
    cli.json("notify", "add", "--form", form["form_id"], "--email", "owner@example.com")
    new = submit(http, form["public_form_key"], {"email": "new@example.com"})

    counts = cli.json("relay", "--once")

    assert counts == {"delivered": 2, "failed": 0, "dead": 0, "fanned_out": 4}
    (request,) = receiver.requests
    assert b'"new@example.com"' in request.body
    (mail,) = smtp.messages
    assert mail.message["X-Intake-Submission-Id"] == new
    assert cli.json("relay", "--once")["delivered"] == 0


def test_relay_once_counts_a_failure_and_outbox_list_shows_it_pending(
    cli: Cli, form: dict[str, str], http: TestClient, private_allowed: None, receiver: Receiver
) -> None:
    receiver.status = 500
    cli.json("webhook", "add", "--form", form["form_id"], "--url", receiver.url())
    submit(http, form["public_form_key"], {"email": "ada@example.com"})

    counts = cli.json("relay", "--once")
    listing = cli.json("outbox", "list")
    dead = cli.json("outbox", "list", "--dead")

    assert counts == {"delivered": 0, "failed": 1, "dead": 0, "fanned_out": 1}
    (delivery,) = listing["deliveries"]
    assert delivery["state"] == "pending"
    assert delivery["attempts"] == 1
    assert delivery["last_error"] == "HTTP 500"
    assert delivery["next_attempt_at"] is not None
    (event,) = listing["events"]
    assert event["event_id"] == delivery["event_id"]
    assert event["published_at"] is not None
    assert "data" not in event, "no visitor input in the listing"
    assert "payload" not in event
    assert dead == {"deliveries": [], "total": 0}


def test_mail_waits_dead_without_smtp_and_outbox_retry_sends_it_once_configured(
    cli: Cli,
    form: dict[str, str],
    http: TestClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli.json("notify", "add", "--form", form["form_id"], "--email", "owner@example.com")
    submission_id = submit(http, form["public_form_key"], {"email": "ada@example.com"})

    parked = cli.json("relay", "--once")
    (dead,) = cli.json("outbox", "list", "--dead")["deliveries"]
    with SmtpServer() as smtp:
        monkeypatch.setenv("INTAKE_SMTP_URL", smtp.url)
        retried = cli.json("outbox", "retry", dead["event_id"])
        sent = cli.json("relay", "--once")
        mail = smtp.messages

    assert parked == {"delivered": 0, "failed": 0, "dead": 1, "fanned_out": 1}
    assert dead["kind"] == "email"
    assert "INTAKE_SMTP_URL" in dead["last_error"]
    assert retried == {"event_id": dead["event_id"], "retried": 1}
    assert sent == {"delivered": 1, "failed": 0, "dead": 0, "fanned_out": 0}
    (received,) = mail
    assert received.rcpt_tos == ("owner@example.com",)
    assert received.message["X-Intake-Submission-Id"] == submission_id
    assert cli.json("outbox", "list", "--dead") == {"deliveries": [], "total": 0}


def test_outbox_retry_refuses_an_unknown_event_as_unknown(cli: Cli) -> None:
    result = cli("outbox", "retry", "evt_nope", "--json")

    assert result.code == 1
    assert result.document["error"] == "no event 'evt_nope' in the outbox"


def test_outbox_retry_refuses_a_known_event_with_nothing_dead(
    cli: Cli, form: dict[str, str], http: TestClient, private_allowed: None, receiver: Receiver
) -> None:
    cli.json("webhook", "add", "--form", form["form_id"], "--url", receiver.url())
    submit(http, form["public_form_key"], {"email": "ada@example.com"})
    cli.json("relay", "--once")
    (delivery,) = cli.json("outbox", "list")["deliveries"]

    result = cli("outbox", "retry", delivery["event_id"], "--json")

    assert result.code == 1
    assert result.document["error"] == f"event {delivery['event_id']!r} has no dead deliveries"


def test_outbox_list_reports_the_true_totals_beyond_the_limit(
    cli: Cli, form: dict[str, str], http: TestClient, private_allowed: None, receiver: Receiver
) -> None:
    receiver.status = 500
    cli.json("webhook", "add", "--form", form["form_id"], "--url", receiver.url())
    for n in range(3):
        submit(http, form["public_form_key"], {"email": f"ada{n}@example.com"})
    cli.json("relay", "--once")  # three deliveries, pending after a failure
    for n in range(2):
        submit(http, form["public_form_key"], {"email": f"bob{n}@example.com"})

    listing = cli.json("outbox", "list", "--limit", "1")
    text = cli("outbox", "list", "--limit", "1").out

    assert len(listing["deliveries"]) == 1
    assert len(listing["events"]) == 1
    assert listing["total"] == 3
    assert listing["waiting"] == 2, "the events not yet fanned out, not those shown"
    assert "1 of 3 deliveries shown" in text
    assert "2 events waiting for the relay to fan them out" in text


def test_removing_an_endpoint_drops_its_undelivered_deliveries(
    cli: Cli, form: dict[str, str], http: TestClient, private_allowed: None, receiver: Receiver
) -> None:
    added = cli.json("webhook", "add", "--form", form["form_id"], "--url", receiver.url())
    submit(http, form["public_form_key"], {"email": "ada@example.com"})
    fan_out()  # the delivery is made while its endpoint is there
    cli.json("webhook", "remove", added["endpoint_id"])

    counts = cli.json("relay", "--once")

    assert counts == {"delivered": 0, "failed": 0, "dead": 0, "fanned_out": 0}
    assert cli.json("outbox", "list")["deliveries"] == []
    assert receiver.requests == []


def test_webhook_test_reaches_that_endpoint_only_through_the_relay_signed(
    cli: Cli, form: dict[str, str], private_allowed: None, receiver: Receiver
) -> None:
    added = cli.json("webhook", "add", "--form", form["form_id"], "--url", receiver.url())
    other = cli.json("webhook", "add", "--form", form["form_id"], "--url", receiver.url("/b"))

    queued = cli.json("webhook", "test", added["endpoint_id"])
    counts = cli.json("relay", "--once")
    listed = cli.json("webhook", "deliveries", added["endpoint_id"])
    none = cli.json("webhook", "deliveries", other["endpoint_id"])
    dead = cli.json("webhook", "deliveries", added["endpoint_id"], "--state", "dead")

    assert (queued["event_type"], queued["state"]) == ("webhook.test", "pending")
    assert counts == {"delivered": 1, "failed": 0, "dead": 0, "fanned_out": 0}
    (request,) = receiver.requests
    payload = Webhook(added["secret"]).verify(request.body, dict(request.headers))
    assert payload["type"] == "webhook.test"
    assert payload["endpoint_id"] == added["endpoint_id"]
    (delivery,) = listed["deliveries"]
    assert delivery["delivery_id"] == queued["delivery_id"]
    assert delivery["state"] == "delivered"
    [attempt] = delivery["attempt_log"]
    assert (attempt["outcome"], attempt["status_code"]) == ("delivered", 200)
    assert none["deliveries"] == [] == dead["deliveries"]


def test_outbox_retry_of_one_delivery(
    cli: Cli, form: dict[str, str], private_allowed: None, receiver: Receiver
) -> None:
    added = cli.json("webhook", "add", "--form", form["form_id"], "--url", receiver.url())
    receiver.status = 500
    queued = cli.json("webhook", "test", added["endpoint_id"])
    cli.json("relay", "--once")

    retried = cli.json("outbox", "retry", queued["delivery_id"])
    receiver.status = 200
    counts = cli.json("relay", "--once")
    refused = cli("outbox", "retry", queued["delivery_id"], "--json")
    unknown = cli("outbox", "retry", "dlv_nope", "--json")

    assert retried == {"delivery_id": queued["delivery_id"], "retried": 1}
    assert counts["delivered"] == 1  # due at once, not after the 5 s of the schedule
    assert refused.code != 0
    assert "delivered already" in refused.document["error"]
    assert unknown.code != 0
    assert len(receiver.requests) == 2


def fan_out() -> None:
    """What a relay does first, alone: the events become deliveries, none is sent."""

    async def run() -> None:
        async with open_runtime(Settings.from_env()) as runtime:
            await runtime.store.deliveries.fan_out(datetime.now(UTC), 100)

    asyncio.run(run())


def test_outbox_list_when_empty(cli: Cli) -> None:
    assert cli.json("outbox", "list") == {
        "deliveries": [],
        "total": 0,
        "events": [],
        "waiting": 0,
    }
    assert cli("outbox", "list").out.splitlines()[0] == "no deliveries"
    assert cli("outbox", "list", "--dead").out == "no dead deliveries\n"


def test_relay_once_without_json_prints_the_counts(cli: Cli) -> None:
    result = cli("relay", "--once")

    assert result.code == 0
    assert result.out == "0 events fanned out; 0 delivered, 0 failed (to be retried), 0 dead\n"


def test_the_new_commands_are_in_the_help(cli: Cli) -> None:
    text = cli("--help").out

    for command in ("relay", "webhook", "notify", "outbox"):
        assert command in text
