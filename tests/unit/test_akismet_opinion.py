"""AkismetOpinion against a real local Akismet (tests/support/fake_akismet.py), through the
`akismet` package's AsyncClient as it is."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator

import pytest

from intake.adapters.akismet_opinion import WARN_EVERY, AkismetOpinion
from intake.domain.spam.model import Label
from intake.domain.spam.opinion import CONTACT_FORM, OpinionQuery
from intake.ports.spam_opinion import OpinionUnavailableError, SpamOpinion
from tests.support.fake_akismet import DISCARD_EMAIL, KEY, SITE_URL, SPAM_EMAIL, FakeAkismet
from tests.unit.test_challenge_http import closed_port

pytestmark = pytest.mark.anyio

SECRET_TEXT = "my-very-private-message-7c1e"
QUERY = OpinionQuery(
    user_ip="203.0.113.9",
    content=f"Hello\n{SECRET_TEXT}",
    author_email="ada@example.org",
    user_agent="Mozilla/5.0 (X11; Linux x86_64)",
    referrer="https://forms.example.org/contact",
)


@pytest.fixture
def fake() -> Iterator[FakeAkismet]:
    with FakeAkismet() as server:
        yield server


@pytest.fixture
async def opinion(fake: FakeAkismet) -> AsyncIterator[AkismetOpinion]:
    adapter = AkismetOpinion(KEY, SITE_URL, timeout=5.0, api_url=fake.base_url)
    yield adapter
    await adapter.aclose()


def with_email(email: str) -> OpinionQuery:
    return OpinionQuery(QUERY.user_ip, QUERY.content, email, QUERY.user_agent, QUERY.referrer)


async def test_the_adapter_satisfies_the_port(opinion: AkismetOpinion) -> None:
    port: SpamOpinion = opinion
    assert await port.check(QUERY) is Label.HAM


async def test_a_check_sends_what_akismet_judges_a_contact_form_by(
    opinion: AkismetOpinion, fake: FakeAkismet
) -> None:
    await opinion.check(QUERY)

    [sent] = fake.received("comment-check")
    assert sent.path == "/1.1/comment-check"
    assert sent.form == {
        "api_key": KEY,
        "blog": SITE_URL,
        "user_ip": QUERY.user_ip,
        "user_agent": QUERY.user_agent,
        "referrer": QUERY.referrer,
        "comment_type": CONTACT_FORM,
        "comment_content": QUERY.content,
        "comment_author_email": QUERY.author_email,
    }


async def test_akismet_spam_and_its_blatant_spam_are_both_spam(opinion: AkismetOpinion) -> None:
    assert await opinion.check(with_email(SPAM_EMAIL)) is Label.SPAM
    assert await opinion.check(with_email(DISCARD_EMAIL)) is Label.SPAM


async def test_what_is_left_out_is_not_sent(opinion: AkismetOpinion, fake: FakeAkismet) -> None:
    await opinion.check(OpinionQuery(user_ip="203.0.113.9", content="hi"))

    [sent] = fake.received("comment-check")
    assert "comment_author_email" not in sent.form
    assert "user_agent" not in sent.form
    assert "referrer" not in sent.form


async def test_a_slow_akismet_gives_no_verdict_after_the_timeout(fake: FakeAkismet) -> None:
    fake.delay = 30.0
    adapter = AkismetOpinion(KEY, SITE_URL, timeout=0.2, api_url=fake.base_url)
    try:
        assert await adapter.check(QUERY) is None
    finally:
        await adapter.aclose()


@pytest.mark.parametrize("api_url", ["unreachable", "error", "garbage", "bad key"])
async def test_an_akismet_down_or_confused_gives_no_verdict(
    fake: FakeAkismet, api_url: str
) -> None:
    url = fake.base_url
    key = KEY
    if api_url == "unreachable":
        url = f"http://127.0.0.1:{closed_port()}"
    elif api_url == "error":
        fake.failures = 1
    elif api_url == "garbage":
        fake.answer = b"<html>Bad Gateway</html>"
    else:
        key = "not-the-key"
    adapter = AkismetOpinion(key, SITE_URL, timeout=5.0, api_url=url)
    try:
        assert await adapter.check(QUERY) is None
    finally:
        await adapter.aclose()


@pytest.mark.parametrize(
    ("label", "endpoint"), [(Label.SPAM, "submit-spam"), (Label.HAM, "submit-ham")]
)
async def test_a_report_goes_to_its_endpoint(
    opinion: AkismetOpinion, fake: FakeAkismet, label: Label, endpoint: str
) -> None:
    await opinion.report(label, QUERY)

    [sent] = fake.requests
    assert sent.endpoint == endpoint
    assert sent.form["user_ip"] == QUERY.user_ip
    assert sent.form["comment_content"] == QUERY.content
    assert sent.form["comment_type"] == CONTACT_FORM


async def test_a_report_akismet_did_not_take_raises(
    opinion: AkismetOpinion, fake: FakeAkismet
) -> None:
    fake.failures = 1
    with pytest.raises(OpinionUnavailableError):
        await opinion.report(Label.SPAM, QUERY)
    fake.answer = b"invalid"
    with pytest.raises(OpinionUnavailableError):
        await opinion.report(Label.HAM, QUERY)
    fake.answer = None

    await opinion.report(Label.SPAM, QUERY)  # taken once Akismet answers again


async def test_no_key_nor_content_reaches_the_logs(
    fake: FakeAkismet, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake.failures = 2
    refused = AkismetOpinion("wrong-key-5d2f", SITE_URL, timeout=5.0, api_url=fake.base_url)
    try:
        assert await refused.check(QUERY) is None  # a 500
        assert await refused.check(QUERY) is None  # a 500
        assert await refused.check(QUERY) is None  # the key refused
        with pytest.raises(OpinionUnavailableError) as raised:
            await refused.report(Label.SPAM, QUERY)
    finally:
        await refused.aclose()

    assert caplog.records, "failures are logged"
    logged = caplog.text + str(raised.value) + repr([vars(r) for r in caplog.records])
    for private in ("wrong-key-5d2f", SECRET_TEXT, QUERY.author_email or "", QUERY.user_ip):
        assert private not in logged


class Ticks:
    """A monotonic clock a test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_an_outage_is_said_once_a_minute_and_its_end_once(
    fake: FakeAkismet, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="intake.adapters.akismet_opinion")
    ticks = Ticks()
    adapter = AkismetOpinion(KEY, SITE_URL, timeout=5.0, api_url=fake.base_url, monotonic=ticks)
    fake.failures = 4
    try:
        for _ in range(3):  # a busy form while Akismet fails
            assert await adapter.check(QUERY) is None
            ticks.now += 1
        ticks.now += WARN_EVERY
        assert await adapter.check(QUERY) is None
        ticks.now += 5
        assert await adapter.check(QUERY) is Label.HAM
        assert await adapter.check(QUERY) is Label.HAM
    finally:
        await adapter.aclose()

    lines = [(r.getMessage(), getattr(r, "checks", None)) for r in caplog.records]
    assert lines == [
        ("akismet gave no verdict: the built-in filter decides alone", 1),
        ("akismet gave no verdict: the built-in filter decides alone", 3),
        ("akismet answers again", None),
    ]
    assert [getattr(r, "reason", None) for r in caplog.records[:2]] == ["RequestError"] * 2
