"""Akismet end to end: the service's own AkismetOpinion, built by the container from the
settings, asked over a socket by step 10 and told of triage by the relay, against a
local fake Akismet (tests/support/fake_akismet.py)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette

from intake.adapters.memory import FakeWebhookSender
from intake.config import Settings
from intake.domain.deliveries import DeliveryState, DestinationKind
from intake.domain.model import Scope, SubmissionStatus
from intake.ports.spam_opinion import SpamOpinion
from intake.service.relay import Relay
from tests.http.conftest import (
    PEER,
    Seeded,
    Service,
    ServiceFactory,
)
from tests.support.fake_akismet import KEY, SITE_URL, SPAM_EMAIL, FakeAkismet
from tests.unit.test_challenge_http import closed_port

SECRET_TEXT = "please-keep-this-private-4e1d"
FIELDS = {"name": "Ada", "email": "ada@example.org", "message": f"Hello {SECRET_TEXT}"}
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
HEADERS = {"user-agent": BROWSER, "referer": "https://forms.example.org/contact"}


@pytest.fixture
def akismet() -> Iterator[FakeAkismet]:
    with FakeAkismet() as fake:
        yield fake


def with_akismet(make_service: ServiceFactory, api_url: str, timeout: float = 5.0) -> Seeded:
    settings = Settings(
        akismet_api_key=KEY,
        akismet_site_url=SITE_URL,
        akismet_api_url=api_url,
        akismet_timeout=timeout,
    )
    return Seeded(make_service(settings))


def opinion_of(svc: Service) -> SpamOpinion:
    assert isinstance(svc.app, Starlette)
    opinion: SpamOpinion | None = svc.app.state.runtime.spam_opinion
    assert opinion is not None, "the container builds Akismet from the settings"
    return opinion


def submit(seeded: Seeded, **fields: str) -> str:
    answer = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, **fields}, headers=HEADERS
    )
    assert answer.status_code == 201, answer.text
    submission_id: str = answer.json()["submission_id"]
    return submission_id


def test_akismet_is_asked_what_it_judges_a_visitor_by(
    make_service: ServiceFactory, akismet: FakeAkismet
) -> None:
    seeded = with_akismet(make_service, akismet.base_url)

    stored = seeded.svc.submission(submit(seeded))

    assert stored.status is SubmissionStatus.ACCEPTED
    [asked] = akismet.received("comment-check")
    assert asked.form["user_ip"] == PEER
    assert asked.form["user_agent"] == BROWSER
    assert asked.form["referrer"] == HEADERS["referer"]
    assert asked.form["comment_type"] == "contact-form"
    assert asked.form["comment_author_email"] == FIELDS["email"]
    assert SECRET_TEXT in asked.form["comment_content"]
    assert asked.form["blog"] == SITE_URL


def test_akismet_spam_flags_a_submission_the_filter_let_through(
    make_service: ServiceFactory, akismet: FakeAkismet
) -> None:
    seeded = with_akismet(make_service, akismet.base_url)

    stored = seeded.svc.submission(submit(seeded, email=SPAM_EMAIL))

    assert stored.status is SubmissionStatus.SPAM
    assert stored.spam_score >= seeded.form.spam_threshold


@pytest.mark.parametrize("fault", ["slow", "down", "error"])
def test_without_akismets_verdict_the_filter_decides_and_nothing_is_lost(
    make_service: ServiceFactory, akismet: FakeAkismet, fault: str
) -> None:
    url = akismet.base_url
    if fault == "slow":
        akismet.delay = 30.0  # far past the timeout: the request does not wait for it
    elif fault == "down":
        url = f"http://127.0.0.1:{closed_port()}"
    else:
        akismet.failures = 10
    seeded = with_akismet(make_service, url, timeout=0.3)

    stored = seeded.svc.submission(submit(seeded, email=SPAM_EMAIL))

    assert stored.status is SubmissionStatus.ACCEPTED  # the built-in filter's verdict
    assert stored.data["message"] == FIELDS["message"]


def test_a_server_submission_is_never_sent_to_akismet(
    make_service: ServiceFactory, akismet: FakeAkismet
) -> None:
    seeded = with_akismet(make_service, akismet.base_url)

    answer = seeded.svc.server(seeded.form.form_id, seeded.key.secret, json=FIELDS, headers=HEADERS)

    assert answer.status_code == 201
    assert akismet.requests == []


def test_a_honeypot_bot_is_never_sent_to_akismet(
    make_service: ServiceFactory, akismet: FakeAkismet
) -> None:
    seeded = with_akismet(make_service, akismet.base_url)

    answer = seeded.svc.public(
        seeded.form.public_form_key, data={**FIELDS, "_gotcha": "bot"}, headers=HEADERS
    )

    assert answer.status_code == 201
    assert akismet.requests == []


def relay_round(svc: Service, webhooks: FakeWebhookSender) -> None:
    relay = Relay(svc.store, webhooks, None, svc.clock, spam_opinion=opinion_of(svc))
    svc.run(relay.run_once)


def patch_status(seeded: Seeded, submission_id: str, status: str) -> None:
    svc = seeded.svc
    key = svc.run(
        svc.services.keys.create, seeded.workspace.workspace_id, scopes=frozenset({Scope.MANAGE})
    )
    answer = svc.client.patch(
        f"/v1/submissions/{submission_id}",
        json={"status": status},
        headers={"authorization": f"Bearer {key.secret}"},
    )
    assert answer.status_code == 200, answer.text


def test_triage_is_reported_by_the_relay_until_akismet_takes_it(
    make_service: ServiceFactory, akismet: FakeAkismet
) -> None:
    seeded = with_akismet(make_service, akismet.base_url)
    svc = seeded.svc
    svc.run(
        svc.services.webhooks.add,
        seeded.form.form_id,
        "https://hooks.example.com/h",
        include_flagged=True,
    )
    webhooks = FakeWebhookSender()
    submission_id = submit(seeded)
    relay_round(svc, webhooks)  # the submission.created goes out
    delivered_before = len(webhooks.sent)

    patch_status(seeded, submission_id, "spam")
    akismet.failures = 1
    relay_round(svc, webhooks)  # Akismet answers 500: tried again later
    assert akismet.received("submit-spam") != []
    svc.clock.advance(60)
    relay_round(svc, webhooks)

    first, second = akismet.received("submit-spam")
    assert first.form == second.form
    assert second.form["user_ip"] == svc.submission(submission_id).client_ip
    assert SECRET_TEXT in second.form["comment_content"]
    assert len(webhooks.sent) == delivered_before  # no owner's endpoint is told
    reports = [
        d
        for d in svc.run(svc.store.deliveries.list_deliveries)
        if d.kind is DestinationKind.AKISMET
    ]
    assert [(r.state, r.attempts) for r in reports] == [(DeliveryState.DELIVERED, 2)]

    # Released again: Akismet said ham, as the owner now does; nothing to correct.
    patch_status(seeded, submission_id, "accepted")
    relay_round(svc, webhooks)
    assert akismet.received("submit-ham") == []


def test_releasing_what_akismet_flagged_tells_it_ham_once(
    make_service: ServiceFactory, akismet: FakeAkismet
) -> None:
    seeded = with_akismet(make_service, akismet.base_url)
    svc = seeded.svc
    submission_id = submit(seeded, email=SPAM_EMAIL)
    assert svc.submission(submission_id).spam_reasons[0] == "akismet:spam"

    patch_status(seeded, submission_id, "accepted")
    patch_status(seeded, submission_id, "accepted")  # the same status: nothing more
    patch_status(seeded, submission_id, "spam")  # Akismet said so: nothing to correct
    relay_round(svc, FakeWebhookSender())

    [ham] = akismet.received("submit-ham")
    assert ham.form["comment_author_email"] == SPAM_EMAIL
    assert akismet.received("submit-spam") == []


def test_what_akismet_never_judged_is_never_reported(
    make_service: ServiceFactory, akismet: FakeAkismet
) -> None:
    seeded = with_akismet(make_service, akismet.base_url)
    svc = seeded.svc
    answer = svc.server(seeded.form.form_id, seeded.key.secret, json=FIELDS, headers=HEADERS)
    submission_id = answer.json()["submission_id"]

    patch_status(seeded, submission_id, "spam")
    relay_round(svc, FakeWebhookSender())

    assert akismet.requests == []
    kinds = {d.kind for d in svc.run(svc.store.deliveries.list_deliveries)}
    assert DestinationKind.AKISMET not in kinds


def test_the_owner_is_not_shown_reports_among_the_submissions_deliveries(
    make_service: ServiceFactory, akismet: FakeAkismet
) -> None:
    seeded = with_akismet(make_service, akismet.base_url)
    svc = seeded.svc
    submission_id = submit(seeded)
    patch_status(seeded, submission_id, "spam")
    relay_round(svc, FakeWebhookSender())
    assert akismet.received("submit-spam") != []

    detail = svc.run(svc.services.submissions.detail, seeded.workspace.workspace_id, submission_id)

    assert [d.delivery.kind for d in detail.deliveries] == []


def test_an_owner_cannot_retry_a_report_to_akismet(
    make_service: ServiceFactory, akismet: FakeAkismet
) -> None:
    """A report is the operator's (`intake outbox retry`): the owner's retry of one
    delivery, by the API as by the dashboard's service call, finds no such delivery."""
    seeded = with_akismet(make_service, akismet.base_url)
    svc = seeded.svc
    submission_id = submit(seeded)
    patch_status(seeded, submission_id, "spam")
    akismet.failures = 1
    relay_round(svc, FakeWebhookSender())  # refused once: due again later
    [report] = [
        d
        for d in svc.run(svc.store.deliveries.list_deliveries)
        if d.kind is DestinationKind.AKISMET
    ]
    key = svc.run(
        svc.services.keys.create, seeded.workspace.workspace_id, scopes=frozenset({Scope.MANAGE})
    )

    answer = svc.client.post(
        f"/v1/deliveries/{report.delivery_id}/retry",
        headers={"authorization": f"Bearer {key.secret}"},
    )

    assert answer.status_code == 404, answer.text
    kept = svc.run(svc.store.deliveries.get_delivery, report.delivery_id)
    assert kept is not None
    assert kept.delivery.next_attempt_at == report.next_attempt_at


def test_neither_the_key_nor_what_was_submitted_reaches_the_logs(
    make_service: ServiceFactory, akismet: FakeAkismet, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    seeded = with_akismet(make_service, akismet.base_url)
    akismet.failures = 1
    submit(seeded)  # its check refused
    submission_id = submit(seeded)  # judged ham
    patch_status(seeded, submission_id, "spam")
    akismet.failures = 10
    relay_round(seeded.svc, FakeWebhookSender())  # its report refused

    assert [r.endpoint for r in akismet.requests] == ["comment-check"] * 2 + ["submit-spam"]
    said = [(r.name, r.getMessage()) for r in caplog.records if r.levelno >= logging.INFO]
    assert ("intake.relay", "delivery failed; will retry") in said
    assert any(name == "intake.adapters.akismet_opinion" for name, _ in said)
    logged = caplog.text + repr([vars(r) for r in caplog.records])
    for private in (KEY, SECRET_TEXT, FIELDS["email"], BROWSER, PEER):
        assert private not in logged
