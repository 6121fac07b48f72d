"""What Akismet is asked and told (domain/spam/opinion.py), how its verdict moves the score,
where its reports go, and its settings."""

from __future__ import annotations

from datetime import UTC, datetime

import attrs
import pytest

from intake.adapters.delivery_rules import destinations
from intake.config import ConfigError, Settings
from intake.domain.deliveries import DestinationKind, WebhookEndpoint
from intake.domain.model import EventType, Submission, SubmissionStatus
from intake.domain.scoring import Score
from intake.domain.spam.model import Label
from intake.domain.spam.opinion import (
    AKISMET_DESTINATION,
    MAX_CONTENT_CHARS,
    OpinionQuery,
    check_query,
    content_of,
    corrects_akismet,
    report_event,
    report_query,
    reported_label,
    verdict_of,
    with_verdict,
)

NOW = datetime(2026, 3, 1, tzinfo=UTC)
SUBMISSION = Submission(
    submission_id="sub_1",
    form_id="frm_1",
    workspace_id="wsp_1",
    status=SubmissionStatus.ACCEPTED,
    data={"name": "Ada", "message": "Hello there", "tags": ["a", {"b": "c"}], "n": 3},
    created_at=NOW,
    subject="Hi",
    reply_to="ada@example.org",
    client_ip="203.0.113.0",
)


def test_the_content_is_the_subject_then_every_text_value_in_order() -> None:
    assert content_of(SUBMISSION.data, "Hi") == "Hi\nAda\nHello there\na\nc"
    assert content_of({"m": "x" * (MAX_CONTENT_CHARS + 5)}, None) == "x" * MAX_CONTENT_CHARS


def query_for(
    client_ip: str = "203.0.113.9", user_agent: str | None = "Mozilla/5.0"
) -> OpinionQuery | None:
    return check_query(
        SUBMISSION.data,
        subject="Hi",
        reply_to="ada@example.org",
        client_ip=client_ip,
        user_agent=user_agent,
        referrer="",
    )


def test_a_visitor_without_an_address_or_a_user_agent_is_not_asked_about() -> None:
    assert query_for(client_ip="") is None
    assert query_for(user_agent=None) is None
    assert query_for(user_agent="") is None


def test_a_check_carries_the_visitor_and_no_empty_referrer() -> None:
    query = check_query(
        {"m": "hi"},
        subject=None,
        reply_to=None,
        client_ip="203.0.113.9",
        user_agent="UA",
        referrer="",
    )
    assert query is not None
    assert (query.user_ip, query.user_agent, query.referrer, query.author_email) == (
        "203.0.113.9",
        "UA",
        None,
        None,
    )


def test_a_report_carries_what_the_submission_kept() -> None:
    query = report_query(SUBMISSION)
    assert query is not None
    assert query.user_ip == "203.0.113.0"
    assert query.content == content_of(SUBMISSION.data, SUBMISSION.subject)
    assert query.author_email == "ada@example.org"
    assert query.user_agent is None  # intake keeps none
    kept_nothing = attrs.evolve(SUBMISSION, client_ip=None)
    assert report_query(kept_nothing) is None


FILTERED = Score(2.0, ("links:1",))


def test_akismets_spam_flags_and_its_ham_clears_nothing() -> None:
    assert with_verdict(FILTERED, Label.SPAM, 5.0) == Score(5.0, ("akismet:spam", "links:1"))
    assert with_verdict(Score(9.0, ()), Label.SPAM, 5.0).points == 9.0
    assert with_verdict(Score(9.0, ()), Label.HAM, 5.0) == Score(9.0, ("akismet:ham",))
    assert with_verdict(FILTERED, None, 5.0) == FILTERED


def test_a_report_event_holds_ids_and_the_label_and_goes_to_akismet_alone() -> None:
    event = report_event("evt_1", SUBMISSION, Label.SPAM, NOW)

    assert event.event_type is EventType.AKISMET_REPORT
    assert event.submission_id == "sub_1"
    assert reported_label(event) is Label.SPAM
    assert "Hello there" not in repr(event.payload)
    assert "203.0.113" not in repr(event.payload)
    endpoint = WebhookEndpoint("whk_1", "frm_1", "https://h.example", "whsec_x", True, None)
    assert destinations(event, [endpoint], [], []) == [
        (DestinationKind.AKISMET, AKISMET_DESTINATION)
    ]


@pytest.mark.parametrize("event_type", [t for t in EventType if t.name != "DELETED"])
def test_an_endpoint_that_takes_flagged_events_takes_no_other_kind(event_type: EventType) -> None:
    endpoint = WebhookEndpoint("whk_1", "frm_1", "https://h.example", "whsec_x", True, None)
    wanted = event_type in (EventType.CREATED, EventType.FLAGGED)
    assert endpoint.wants(event_type) is wanted


def test_akismet_is_on_with_both_its_key_and_its_site_and_never_with_one() -> None:
    assert not Settings.from_env({}).akismet_on
    both = {"INTAKE_AKISMET_API_KEY": "0123456789ab", "INTAKE_AKISMET_SITE_URL": "https://x.org"}
    assert Settings.from_env(both).akismet_on
    for name, value in both.items():
        with pytest.raises(ConfigError, match="go together"):
            Settings.from_env({name: value})
    with pytest.raises(ConfigError, match="INTAKE_AKISMET_SITE_URL"):
        Settings.from_env({**both, "INTAKE_AKISMET_SITE_URL": "x.org"})
    with pytest.raises(ConfigError, match="INTAKE_AKISMET_TIMEOUT"):
        Settings.from_env({**both, "INTAKE_AKISMET_TIMEOUT": "60"})


def test_the_key_is_never_shown_with_the_settings() -> None:
    key = "0123456789ab-secret"
    settings = Settings.from_env(
        {"INTAKE_AKISMET_API_KEY": key, "INTAKE_AKISMET_SITE_URL": "https://x.org"}
    )
    assert key not in repr(settings)


@pytest.mark.parametrize(
    ("reasons", "verdict"),
    [
        (("akismet:spam", "links:1"), Label.SPAM),
        (("filter:+1.0", "akismet:ham"), Label.HAM),
        (("links:1",), None),
        (("akismet:maybe",), None),
        ((), None),
    ],
)
def test_akismets_verdict_is_read_back_from_the_reasons(
    reasons: tuple[str, ...], verdict: Label | None
) -> None:
    assert verdict_of(reasons) is verdict


def test_only_a_decision_that_corrects_akismet_is_reported() -> None:
    said_spam = attrs.evolve(SUBMISSION, spam_reasons=("akismet:spam",))
    assert corrects_akismet(said_spam, Label.HAM)
    assert not corrects_akismet(said_spam, Label.SPAM)
    assert not corrects_akismet(SUBMISSION, Label.SPAM)  # never judged
