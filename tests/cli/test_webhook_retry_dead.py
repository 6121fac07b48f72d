"""`intake webhook retry-dead ENDPOINT_ID`: every dead delivery to that endpoint due now,
which the real relay then sends to a local receiver; another endpoint's left dead."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from starlette.testclient import TestClient

from intake.config import Settings
from intake.library_runtime import open_runtime
from tests.cli.conftest import Cli, submit
from tests.support.receiver import Receiver


@pytest.fixture
def form(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("INTAKE_WEBHOOK_ALLOW_PRIVATE", "true")  # the local receiver
    workspace = cli.json("workspace", "create", "--name", "Acme")
    created: dict[str, str] = cli.json("form", "create", "--workspace", workspace["workspace_id"])
    return created


def fan_out_and_park_dead() -> None:
    """What a relay does with each event, then records once each delivery's last
    attempt failed: every delivery dead."""

    async def run() -> None:
        async with open_runtime(Settings.from_env()) as runtime:
            deliveries = runtime.store.deliveries
            now = datetime.now(UTC)
            await deliveries.fan_out(now, 100)
            for claimed in (await deliveries.claim_due(now, timedelta(minutes=2), 100)).leased:
                delivery_id = claimed.delivery.delivery_id
                await deliveries.record_failure(delivery_id, now, "HTTP 500", None, 500)

    asyncio.run(run())


def test_retry_dead_makes_that_endpoints_dead_deliveries_due_and_the_relay_sends_them(
    cli: Cli, form: dict[str, str], http: TestClient, receiver: Receiver
) -> None:
    add = ("webhook", "add", "--form", form["form_id"], "--url")
    mine = cli.json(*add, receiver.url("/mine"))
    other = cli.json(*add, receiver.url("/other"))
    for n in (1, 2):
        submit(http, form["public_form_key"], {"message": f"Hello {n}"})
    fan_out_and_park_dead()

    retried = cli.json("webhook", "retry-dead", mine["endpoint_id"])
    counts = cli.json("relay", "--once")
    again = cli("webhook", "retry-dead", mine["endpoint_id"])
    unknown = cli("webhook", "retry-dead", "wh_nope", "--json")

    assert retried == {"endpoint_id": mine["endpoint_id"], "retried": 2}
    assert counts["delivered"] == 2
    assert [r.path for r in receiver.requests] == ["/mine", "/mine"]
    still_dead = cli.json("outbox", "list", "--dead")["deliveries"]
    assert [d["destination_id"] for d in still_dead] == [other["endpoint_id"]] * 2
    assert again.out == f"no dead deliveries to {mine['endpoint_id']}\n"
    assert unknown.code != 0
    assert "no webhook endpoint" in unknown.document["error"]
