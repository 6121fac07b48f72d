"""The relay on the in-memory store, the fake senders and a clock that moves only when
told: fan-out, the retry schedule, 410, flagged events, leases, and (a property) that no
committed event's delivery is ever lost, whatever the receivers and crashes do."""

from __future__ import annotations

import asyncio
import enum
import json
import re
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import anyio
import pytest
from attrs import define, evolve
from hypothesis import example, given, settings
from hypothesis import strategies as st
from standardwebhooks import Webhook

from intake.adapters.delivery_rules import destinations
from intake.adapters.memory import FakeClock, InMemoryStore, SeededIdSource
from intake.adapters.memory.senders import OK, FakeMailer, FakeWebhookSender, SentWebhook
from intake.domain import ids
from intake.domain.deliveries import (
    MAX_ATTEMPTS,
    RETRY_SCHEDULE,
    Delivery,
    DeliveryState,
    DestinationKind,
    NotificationRecipient,
    WebhookEndpoint,
)
from intake.domain.model import Form, OutboxEvent, Submission, SubmissionStatus
from intake.domain.notifications import SUBMISSION_ID_HEADER
from intake.domain.signing import DownloadSigner
from intake.domain.uploads import StoredFile
from intake.domain.webhooks import headers
from intake.ports.senders import MailRejected, MailUnavailable, WebhookResponse
from intake.ports.submissions import CommitPlan, Committed
from intake.service.admin import owner_services
from intake.service.delivery_sending import NO_MAILER
from intake.service.relay import Relay, RelayRound
from tests.conftest import examples

pytestmark = pytest.mark.anyio

HOOK_A = "https://a.example.com/hooks"
HOOK_B = "https://b.example.com/hooks"
LEASE = timedelta(minutes=2)


class World:
    """A form with destinations, and a relay over the fakes."""

    def __init__(self) -> None:
        self.store = InMemoryStore()
        self.clock = FakeClock()
        self.ids = SeededIdSource(7)
        self.sender = FakeWebhookSender()
        self.mailer = FakeMailer()
        self.services = owner_services(self.store, self.clock, self.ids)
        self.form: Form | None = None
        self._count = 0

    def relay(self, *, mailer: bool = True, **options: object) -> Relay:
        return Relay(
            self.store,
            self.sender,
            self.mailer if mailer else None,
            self.clock,
            mail_from="intake@example.com",
            base_url="https://intake.example.com",
            jitter=lambda: 0.0,  # the schedule exactly, so the test can step through it
            **options,  # type: ignore[arg-type]
        )

    async def make_form(self) -> Form:
        workspace = await self.services.workspaces.create("Acme")
        self.form = await self.services.forms.create(workspace.workspace_id, name="Contact")
        return self.form

    async def webhook(self, url: str, *, include_flagged: bool = False) -> WebhookEndpoint:
        assert self.form is not None
        created = await self.services.webhooks.add(
            self.form.form_id, url, include_flagged=include_flagged
        )
        return created.endpoint

    async def recipient(self, email: str = "owner@example.com") -> NotificationRecipient:
        assert self.form is not None
        return await self.services.recipients.add(self.form.form_id, email)

    async def commit(
        self,
        status: SubmissionStatus = SubmissionStatus.ACCEPTED,
        *,
        files: tuple[StoredFile, ...] = (),
        signer: DownloadSigner | None = None,
    ) -> OutboxEvent:
        assert self.form is not None
        self._count += 1
        submission = Submission(
            submission_id=ids.submission_id(self._count, self.ids.random_bytes(12)),
            form_id=self.form.form_id,
            workspace_id=self.form.workspace_id,
            status=status,
            data={"email": "visitor@example.org", "message": f"Hello {self._count}"},
            created_at=self.clock.now(),
            subject="Hello",
            files=files,
        )
        event = OutboxEvent.for_submission(
            ids.prefixed_id("evt", self.ids.random_bytes(16)), submission, signer
        )
        result = await self.store.submissions.commit(CommitPlan(submission, event, None, None))
        assert isinstance(result, Committed)
        return event

    def form_id(self) -> str:
        assert self.form is not None
        return self.form.form_id

    async def deliveries(self) -> list[Delivery]:
        return await self.store.deliveries.list_deliveries(limit=10_000)

    async def delivery(self) -> Delivery:
        (only,) = await self.deliveries()
        return only


def _verified(sent: SentWebhook, secret: str) -> bool:
    """The signature checked with the Standard Webhooks reference implementation. Its
    `verify` also wants the timestamp within 5 minutes of the real time, which a fake
    clock is not, so the expected signature is computed from the sent timestamp."""
    moment = datetime.fromtimestamp(int(sent.headers["webhook-timestamp"]))
    expected = Webhook(secret).sign(sent.webhook_id, moment, sent.body.decode("utf-8"))
    return sent.headers["webhook-signature"] == expected


@pytest.fixture
async def world() -> World:
    world = World()
    await world.make_form()
    return world


async def test_each_destination_gets_the_event_once(world: World) -> None:
    a = await world.webhook(HOOK_A)
    b = await world.webhook(HOOK_B)
    await world.recipient("owner@example.com")
    event = await world.commit()

    first = await world.relay().run_once()
    again = await world.relay().run_once()

    assert first == RelayRound(fanned_out=1, delivered=3, failed=0, dead=0)
    assert again == RelayRound()
    assert sorted(s.url for s in world.sender.sent) == [HOOK_A, HOOK_B]
    for sent, endpoint in zip(sorted(world.sender.sent, key=lambda s: s.url), (a, b), strict=True):
        assert sent.webhook_id == event.event_id
        assert sent.payload() == dict(event.payload)
        assert _verified(sent, endpoint.secret)
    (mail,) = world.mailer.sent
    assert mail["To"] == "owner@example.com"
    assert mail[SUBMISSION_ID_HEADER] == event.submission_id
    assert {d.state for d in await world.deliveries()} == {DeliveryState.DELIVERED}


async def test_the_body_is_compact_utf8_json_of_the_payload(world: World) -> None:
    await world.webhook(HOOK_A)
    event = await world.commit()

    await world.relay().run_once()

    (sent,) = world.sender.sent
    assert sent.body == json.dumps(
        dict(event.payload), ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["webhook-timestamp"] == str(int(world.clock.now().timestamp()))


async def test_a_failing_receiver_is_retried_on_the_schedule_then_parked_dead(
    world: World,
) -> None:
    await world.webhook(HOOK_A)
    world.sender.script(HOOK_A, *[WebhookResponse(status=500)] * MAX_ATTEMPTS)
    await world.commit()
    relay = world.relay()

    rounds = [await relay.run_once()]
    for delay in RETRY_SCHEDULE[1:]:
        world.clock.advance(delay.total_seconds() - 1)
        assert await relay.run_once() == RelayRound(), "not due a second early"
        world.clock.advance(1)
        rounds.append(await relay.run_once())

    assert [r.failed for r in rounds] == [1] * (MAX_ATTEMPTS - 1) + [0]
    assert rounds[-1].dead == 1
    assert len(world.sender.sent) == MAX_ATTEMPTS
    assert {s.webhook_id for s in world.sender.sent} == {world.sender.sent[0].webhook_id}
    delivery = await world.delivery()
    assert delivery.state is DeliveryState.DEAD
    assert delivery.attempts == MAX_ATTEMPTS
    assert delivery.last_error == "HTTP 500"
    world.clock.advance(timedelta(days=2).total_seconds())
    assert await relay.run_once() == RelayRound(), "a dead delivery is not tried again"


async def test_a_failure_is_due_again_after_the_next_delay_of_the_schedule(world: World) -> None:
    await world.webhook(HOOK_A)
    world.sender.script(HOOK_A, WebhookResponse(status=None, error="timed out"))
    await world.commit()

    await world.relay().run_once()

    delivery = await world.delivery()
    assert delivery.state is DeliveryState.PENDING
    assert delivery.next_attempt_at == world.clock.now() + RETRY_SCHEDULE[1]
    assert delivery.last_error == "timed out"


async def test_a_longer_retry_after_is_honoured_and_a_shorter_one_is_not(world: World) -> None:
    await world.webhook(HOOK_A)
    await world.webhook(HOOK_B)
    world.sender.script(HOOK_A, WebhookResponse(status=503, retry_after=120.0))
    world.sender.script(HOOK_B, WebhookResponse(status=429, retry_after=1.0))
    await world.commit()

    await world.relay().run_once()

    due = {d.destination_id: d.next_attempt_at for d in await world.deliveries()}
    endpoints = {e.url: e.endpoint_id for e in await world.services.webhooks.all(world.form_id())}
    assert due[endpoints[HOOK_A]] == world.clock.now() + timedelta(seconds=120)
    assert due[endpoints[HOOK_B]] == world.clock.now() + RETRY_SCHEDULE[1]


async def test_410_gone_disables_the_endpoint_and_parks_the_delivery(world: World) -> None:
    gone = await world.webhook(HOOK_A)
    await world.webhook(HOOK_B)
    world.sender.script(HOOK_A, WebhookResponse(status=410))
    await world.commit()

    first = await world.relay().run_once()
    await world.commit()
    second = await world.relay().run_once()

    assert first == RelayRound(fanned_out=1, delivered=1, dead=1)
    assert second == RelayRound(fanned_out=1, delivered=1)
    endpoint = await world.store.destinations.get_endpoint(gone.endpoint_id)
    assert endpoint is not None
    assert endpoint.disabled_at == world.clock.now()
    assert [s.url for s in world.sender.sent].count(HOOK_A) == 1, "never called again"
    dead = await world.store.deliveries.list_deliveries(dead_only=True)
    assert [d.last_error for d in dead] == ["HTTP 410 Gone: the endpoint is now disabled"]


async def test_a_delivery_parked_without_an_attempt_counts_as_dead(world: World) -> None:
    removed = await world.webhook(HOOK_A)
    await world.webhook(HOOK_B)
    await world.commit()
    relay = world.relay()
    assert await relay.run_once() == RelayRound(fanned_out=1, delivered=2)
    await world.commit()
    await world.store.deliveries.fan_out(world.clock.now(), 100)  # to both, not yet sent
    # Disabled, not removed: a removed endpoint's undelivered deliveries go with it.
    await world.store.destinations.disable_endpoint(removed.endpoint_id, world.clock.now())
    reported: list[RelayRound] = []
    relay.report_progress(reported.append)

    done = await relay.run_once()

    assert done == RelayRound(delivered=1, dead=1)
    assert sum(r.dead for r in reported) == 1
    dead = await world.store.deliveries.list_deliveries(dead_only=True)
    assert [(d.destination_id, d.attempts) for d in dead] == [(removed.endpoint_id, 0)]


async def test_flagged_events_go_only_to_endpoints_that_include_them_never_to_mail(
    world: World,
) -> None:
    await world.webhook(HOOK_A, include_flagged=True)
    await world.webhook(HOOK_B)
    await world.recipient()
    event = await world.commit(SubmissionStatus.SPAM)

    done = await world.relay().run_once()

    assert done == RelayRound(fanned_out=1, delivered=1)
    (sent,) = world.sender.sent
    assert sent.url == HOOK_A
    assert sent.payload()["type"] == "submission.flagged"
    assert sent.webhook_id == event.event_id
    assert world.mailer.attempts == []


async def test_unavailable_mail_is_retried_and_rejected_mail_is_dead(world: World) -> None:
    await world.recipient("owner@example.com")
    world.mailer.script(MailUnavailable("timed out"), MailRejected("550 5.1.1"))
    await world.commit()
    relay = world.relay()

    first = await relay.run_once()
    world.clock.advance(RETRY_SCHEDULE[1].total_seconds())
    second = await relay.run_once()

    assert first == RelayRound(fanned_out=1, failed=1)
    assert second == RelayRound(dead=1)
    delivery = await world.delivery()
    assert delivery.state is DeliveryState.DEAD
    assert delivery.last_error == "mail rejected: 550 5.1.1"
    assert world.mailer.sent == []
    assert len(world.mailer.attempts) == 2


async def test_without_a_mail_server_mail_is_parked_dead_and_can_be_retried_later(
    world: World,
) -> None:
    await world.recipient()
    event = await world.commit()

    parked = await world.relay(mailer=False).run_once()
    retried = await world.services.deliveries.retry_event(event.event_id)
    sent = await world.relay().run_once()

    assert parked == RelayRound(fanned_out=1, dead=1)
    assert retried == 1
    assert sent == RelayRound(delivered=1)
    assert len(world.mailer.sent) == 1
    assert (await world.delivery()).state is DeliveryState.DELIVERED


async def test_parked_without_a_mail_server_says_why(world: World) -> None:
    await world.recipient()
    await world.commit()

    await world.relay(mailer=False).run_once()

    assert (await world.delivery()).last_error == NO_MAILER


class _HangingSender:
    """Answers nothing until cancelled: a relay killed in the middle of a send."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.headers: list[Mapping[str, str]] = []

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> WebhookResponse:
        self.headers.append(headers)
        self.started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def test_a_delivery_cut_off_mid_send_is_redelivered_with_the_same_id_after_the_lease(
    world: World,
) -> None:
    await world.webhook(HOOK_A)
    event = await world.commit()
    hanging = _HangingSender()
    killed = Relay(world.store, hanging, None, world.clock, jitter=lambda: 0.0)

    async with anyio.create_task_group() as group:
        group.start_soon(killed.run_once)
        await hanging.started.wait()
        group.cancel_scope.cancel()
    relay = world.relay()
    within_lease = await relay.run_once()
    world.clock.advance(LEASE.total_seconds())
    after_lease = await relay.run_once()

    assert within_lease == RelayRound(), "the lease keeps another relay off it"
    assert after_lease == RelayRound(delivered=1)
    (redelivered,) = world.sender.sent
    assert hanging.headers[0]["webhook-id"] == redelivered.webhook_id == event.event_id


class _SlowSender(FakeWebhookSender):
    """Each send takes `seconds` of the fake clock's time."""

    def __init__(self, clock: FakeClock, seconds: float) -> None:
        super().__init__()
        self._clock = clock
        self._seconds = seconds

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> WebhookResponse:
        self._clock.advance(self._seconds)
        return await super().send(url, headers, body)


async def test_a_delivery_is_not_started_with_its_lease_nearly_spent(world: World) -> None:
    await world.webhook(HOOK_A)
    await world.webhook(HOOK_B)
    await world.commit()
    world.sender = _SlowSender(world.clock, seconds=100)
    relay = world.relay(concurrency=1)

    first = await relay.run_once()
    world.clock.advance(LEASE.total_seconds())
    second = await relay.run_once()

    assert first == RelayRound(fanned_out=1, delivered=1)
    assert second == RelayRound(delivered=1)
    assert sorted(s.url for s in world.sender.sent) == [HOOK_A, HOOK_B]


class _CountingSender(FakeWebhookSender):
    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.most = 0

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> WebhookResponse:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        for _ in range(5):
            await anyio.lowlevel.checkpoint()  # let the others start, if they may
        self.in_flight -= 1
        return await super().send(url, headers, body)


async def test_sends_run_concurrently_up_to_the_limit(world: World) -> None:
    for n in range(10):
        await world.webhook(f"https://h{n}.example.com/")
    await world.commit()
    world.sender = counting = _CountingSender()

    done = await world.relay(concurrency=3).run_once()

    assert done.delivered == 10
    assert counting.most == 3


async def test_more_than_a_batch_is_delivered_in_one_run(world: World) -> None:
    await world.webhook(HOOK_A)
    for _ in range(7):
        await world.commit()

    done = await world.relay(batch=3).run_once()

    assert done == RelayRound(fanned_out=7, delivered=7)


async def test_run_forever_wakes_for_a_new_event_and_stops_when_told(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    await world.webhook(HOOK_A)
    # A poll interval longer than the test: only the commit's wake-up can start a round.
    relay = world.relay(poll_interval=timedelta(minutes=10))
    stop = anyio.Event()
    totals: list[RelayRound] = []
    # Set as the relay goes idle after its first round, then after its second.
    idle = [anyio.Event(), anyio.Event()]
    wakeup = world.store.new_events
    wait_for_events = wakeup.wait

    async def wait(seconds: float) -> None:
        next(event for event in idle if not event.is_set()).set()
        await wait_for_events(seconds)

    monkeypatch.setattr(wakeup, "wait", wait)

    async def run() -> None:
        totals.append(await relay.run_forever(stop))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await idle[0].wait()
            await world.commit()
            await idle[1].wait()
            assert len(world.sender.sent) == 1
            stop.set()

    assert totals == [RelayRound(fanned_out=1, delivered=1)]


# The property: whatever each attempt meets, and however often the relay dies, every
# committed event ends delivered or dead at each of its destinations, and every webhook
# send of an event carries that event's id.


class Attempt(enum.Enum):
    SUCCESS = "success"
    ERROR_500 = "500"
    TIMEOUT = "timeout"
    GONE_410 = "410"
    MAIL_UNAVAILABLE = "mail unavailable"
    REJECTED = "rejected"
    CRASH = "crash"  # the relay dies after sending, before recording


class Crash(BaseException):
    """A relay process killed: nothing after it runs, nothing is recorded."""


_WEBHOOK_ANSWERS = {
    Attempt.SUCCESS: WebhookResponse(status=204),
    Attempt.ERROR_500: WebhookResponse(status=500),
    Attempt.TIMEOUT: WebhookResponse(status=None, error="timed out"),
    Attempt.GONE_410: WebhookResponse(status=410),
    Attempt.MAIL_UNAVAILABLE: WebhookResponse(status=503, retry_after=3600.0),
    Attempt.REJECTED: WebhookResponse(status=400),
    Attempt.CRASH: WebhookResponse(status=200),  # received, but the relay dies
}


@define
class _Script:
    """The attempts in the order the relay makes them, then success."""

    attempts: list[Attempt]

    def next(self) -> Attempt:
        return self.attempts.pop(0) if self.attempts else Attempt.SUCCESS


class _ScriptedSender(FakeWebhookSender):
    def __init__(self, script: _Script) -> None:
        super().__init__()
        self._script = script

    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> WebhookResponse:
        attempt = self._script.next()
        self.script(url, _WEBHOOK_ANSWERS[attempt])
        response = await super().send(url, headers, body)
        if attempt is Attempt.CRASH:
            raise Crash
        return response


class _ScriptedMailer(FakeMailer):
    def __init__(self, script: _Script) -> None:
        super().__init__()
        self._script_of_attempts = script

    async def send(self, message: EmailMessage) -> None:
        attempt = self._script_of_attempts.next()
        if attempt in (Attempt.ERROR_500, Attempt.TIMEOUT, Attempt.MAIL_UNAVAILABLE):
            self.script(MailUnavailable("try later"))
        elif attempt in (Attempt.GONE_410, Attempt.REJECTED):
            self.script(MailRejected("550 5.1.1"))
        await super().send(message)
        if attempt is Attempt.CRASH:
            raise Crash


async def _run_until_settled(
    attempts: Sequence[Attempt], statuses: Sequence[SubmissionStatus], concurrency: int
) -> tuple[World, list[OutboxEvent], list[WebhookEndpoint], list[NotificationRecipient]]:
    world = World()
    await world.make_form()
    endpoints = [
        await world.webhook(HOOK_A, include_flagged=True),
        await world.webhook(HOOK_B),
    ]
    recipients = [await world.recipient("owner@example.com")]
    events = [await world.commit(status) for status in statuses]
    script = _Script(list(attempts))
    world.sender = _ScriptedSender(script)
    world.mailer = _ScriptedMailer(script)
    relay = world.relay(concurrency=concurrency)
    rounds = 0
    while (await world.store.deliveries.backlog(world.clock.now()))[0]:
        rounds += 1
        assert rounds < 200, "the deliveries never settle"
        try:
            await relay.run_once()
        except* Crash:
            pass
        # Past the longest retry delay (10 h, stretched by jitter) and past any lease.
        world.clock.advance(timedelta(hours=13).total_seconds())
    return world, events, endpoints, recipients


@settings(max_examples=examples(80))
@example(
    attempts=[Attempt.CRASH, Attempt.ERROR_500, Attempt.CRASH, Attempt.GONE_410],
    statuses=[SubmissionStatus.ACCEPTED, SubmissionStatus.SPAM],
    concurrency=4,
)
@given(
    attempts=st.lists(st.sampled_from(Attempt), max_size=40),
    statuses=st.lists(
        st.sampled_from([SubmissionStatus.ACCEPTED, SubmissionStatus.SPAM]),
        min_size=1,
        max_size=4,
    ),
    concurrency=st.sampled_from([1, 4]),
)
def test_no_committed_event_is_lost_and_each_keeps_one_webhook_id(
    attempts: list[Attempt], statuses: list[SubmissionStatus], concurrency: int
) -> None:
    world, events, endpoints, recipients = asyncio.run(
        _run_until_settled(attempts, statuses, concurrency)
    )
    deliveries = asyncio.run(world.deliveries())
    by_key = {(d.event_id, d.kind, d.destination_id): d for d in deliveries}
    urls = {e.endpoint_id: e.url for e in endpoints}
    secrets = {e.url: e.secret for e in endpoints}
    emails = {r.recipient_id: r.email for r in recipients}
    assert isinstance(world.sender, FakeWebhookSender)

    expected = {
        (event.event_id, kind, destination)
        for event in events
        for kind, destination in destinations(event, endpoints, recipients)
    }
    assert set(by_key) == expected, "one delivery per event and destination that wants it"
    for (event_id, kind, destination), delivery in by_key.items():
        assert delivery.state in (DeliveryState.DELIVERED, DeliveryState.DEAD)
        assert delivery.attempts <= MAX_ATTEMPTS
        if delivery.state is not DeliveryState.DELIVERED:
            continue
        if kind is DestinationKind.WEBHOOK:
            assert any(
                s.url == urls[destination] and s.webhook_id == event_id and s.response.delivered
                for s in world.sender.sent
            ), "delivered means a receiver said 2xx"
        else:
            submission = next(e.submission_id for e in events if e.event_id == event_id)
            assert any(
                m["To"] == emails[destination] and m[SUBMISSION_ID_HEADER] == submission
                for m in world.mailer.sent
            ), "delivered means the mail server took it"

    event_of = {e.submission_id: e.event_id for e in events}
    for sent in world.sender.sent:
        assert sent.webhook_id == event_of[sent.payload()["submission_id"]]
        assert _verified(sent, secrets[sent.url])


def test_the_signature_check_of_these_tests_can_fail() -> None:
    # The tests above lean on _verified; it must be able to say no.
    secret = ids.webhook_secret(bytes(24))
    body = b'{"a":1}'
    sent = SentWebhook(HOOK_A, headers(secret, "evt_1", 1_700_000_000, body), body, OK)

    assert _verified(sent, secret)
    assert not _verified(sent, ids.webhook_secret(b"\x01" * 24))
    assert not _verified(evolve(sent, body=b'{"a":2}'), secret)


# The README's receiver example, run against what the relay sends.

README = Path(__file__).resolve().parents[2] / "README.md"


def _receiver_example() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(
        r"<!-- example: receiving webhooks -->\s*```python\n(.*?)```", text, re.DOTALL
    )
    assert match is not None, "the README has lost its webhook receiver example"
    return match.group(1)


def test_the_readme_receiver_accepts_a_signed_event_once_and_refuses_a_forged_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    namespace: dict[str, Any] = {"__name__": "readme_receiver"}
    exec(compile(_receiver_example(), str(README), "exec"), namespace)
    secret = ids.webhook_secret(bytes(range(24)))
    namespace["WEBHOOK_SECRET"] = secret
    body = b'{"type":"submission.created","submission_id":"sub_1","data":{"a":"b"}}'
    signed = headers(secret, "evt_1", int(time.time()), body)
    forged = headers(ids.webhook_secret(bytes(24)), "evt_1", int(time.time()), body)
    receive = namespace["receive"]

    answers = [receive(body, signed), receive(body, signed), receive(body, forged)]

    assert answers == [200, 200, 400]
    assert capsys.readouterr().out == "submission.created sub_1 {'a': 'b'}\n"


class _BrokenSender(FakeWebhookSender):
    async def send(self, url: str, headers: Mapping[str, str], body: bytes) -> WebhookResponse:
        await super().send(url, headers, body)
        raise RuntimeError("a bug")


async def test_an_unexpected_error_counts_as_a_failed_attempt_not_a_stopped_relay(
    world: World,
) -> None:
    await world.webhook(HOOK_A)
    await world.webhook(HOOK_B)
    await world.commit()
    world.sender = _BrokenSender()

    done = await world.relay().run_once()

    assert done == RelayRound(fanned_out=1, failed=2)
    errors = {d.last_error for d in await world.deliveries()}
    assert errors == {"internal error (RuntimeError)"}


# -- file links -------------------------------------------------------------------------

SIGNER = DownloadSigner(b"k" * 32, "https://intake.example.com", timedelta(days=7))


def _files(submission_id: str) -> tuple[StoredFile, ...]:
    return tuple(
        StoredFile(
            field="cv",
            name=name,
            size=size,
            content_type="application/pdf",
            sha256=f"{index:064x}",
            key=f"{submission_id}/{index}",
        )
        for index, (name, size) in enumerate((("cv.pdf", 12_345), ("<b>letter</b>.pdf", 999)))
    )


async def test_a_late_webhook_carries_file_links_made_as_it_is_sent(world: World) -> None:
    await world.webhook(HOOK_A)
    event = await world.commit(files=_files("sub_x"), signer=SIGNER)
    stored_files = event.payload["files"]
    assert isinstance(stored_files, list)
    assert len(stored_files) == 2
    # Long after the links made at commit time expired.
    world.clock.advance(timedelta(days=30).total_seconds())

    await world.relay(signer=SIGNER).run_once()

    (sent,) = world.sender.sent
    body = sent.payload()
    now = world.clock.now()
    for index, (file, before) in enumerate(zip(body["files"], stored_files, strict=True)):
        assert {k: v for k, v in file.items() if k not in ("url", "url_expires_at")} == {
            k: v for k, v in before.items() if k not in ("url", "url_expires_at")
        }
        link = SIGNER.link(event.submission_id, index, now)
        assert file["url"] == link.url
        assert file["url_expires_at"] == link.expires_at.isoformat()
        assert file["url"] != before["url"]
        query = dict(p.split("=", 1) for p in file["url"].split("?", 1)[1].split("&"))
        assert SIGNER.verify(event.submission_id, index, query["expires"], query["signature"], now)
    # Everything else is the stored event, and the signature covers the body sent.
    assert {k: v for k, v in body.items() if k != "files"} == {
        k: v for k, v in event.payload.items() if k != "files"
    }
    (endpoint,) = await world.store.destinations.list_endpoints(world.form_id())
    assert _verified(sent, endpoint.secret)


async def test_an_event_without_files_is_sent_byte_for_byte_with_a_signer(world: World) -> None:
    await world.webhook(HOOK_A)
    event = await world.commit(signer=SIGNER)

    await world.relay(signer=SIGNER).run_once()

    (sent,) = world.sender.sent
    assert sent.body == json.dumps(
        dict(event.payload), ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")


async def test_without_a_signer_file_links_are_sent_as_stored(world: World) -> None:
    await world.webhook(HOOK_A)
    event = await world.commit(files=_files("sub_x"), signer=SIGNER)
    world.clock.advance(3600)

    await world.relay().run_once()

    (sent,) = world.sender.sent
    assert sent.payload()["files"] == event.payload["files"]


async def test_a_notification_mail_lists_the_files_with_fresh_links(world: World) -> None:
    await world.recipient("owner@example.com")
    event = await world.commit(files=_files("sub_x"), signer=SIGNER)
    world.clock.advance(timedelta(days=30).total_seconds())

    await world.relay(signer=SIGNER).run_once()

    (mail,) = world.mailer.sent
    text = mail.get_body(preferencelist=("plain",))
    assert text is not None
    content = text.get_content()
    fresh = SIGNER.link(event.submission_id, 0, world.clock.now())
    assert "cv: cv.pdf (12.3 kB)" in content
    assert fresh.url in content
    stored_files = event.payload["files"]
    assert isinstance(stored_files, list)
    assert stored_files[0]["url"] not in content
