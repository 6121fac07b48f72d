"""HttpChallengeVerifier against a real local siteverify server (no mocked client)."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from intake.adapters.challenge_http import RECAPTCHA_MIN_SCORE, HttpChallengeVerifier
from intake.adapters.tls import client_tls
from intake.domain.model import Challenge, ChallengeProvider
from intake.ports.challenge import DEFAULT_VERIFY_URLS, ChallengeVerdict, ChallengeVerifier
from tests.support.fake_provider import (
    FAIL_SECRET,
    PASS_SECRET,
    SPENT_SECRET,
    FakeProvider,
)

pytestmark = pytest.mark.anyio

TOKEN = "visitor-token-4f2b9c"
UNKNOWN_SECRET = "operator-secret-that-the-provider-does-not-know"
ALL_PROVIDERS = list(ChallengeProvider)
LOGGER = "intake.adapters.challenge_http"


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as server:
        yield server


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    # With the process's TLS context, as the service's own clients are opened.
    async with httpx.AsyncClient(verify=client_tls()) as http:
        yield http


@pytest.fixture
def verifier(fake: FakeProvider, client: httpx.AsyncClient) -> HttpChallengeVerifier:
    # These tests are about verdicts: a patient timeout, so that a loaded machine's slow
    # answer from the fake (a thread of this process) is not taken for a provider down.
    # The tests of the timeout build verifiers of their own.
    return HttpChallengeVerifier(client, fake.urls, timeout=30.0)


def challenge(secret: str, provider: ChallengeProvider = ChallengeProvider.TURNSTILE) -> Challenge:
    return Challenge(provider=provider, secret=secret)


def closed_port() -> int:
    """A port nothing listens on: bound once to get a free number, then released."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_the_verifier_satisfies_the_challenge_port(verifier: HttpChallengeVerifier) -> None:
    port: ChallengeVerifier = verifier
    assert port is verifier


def test_the_default_urls_are_the_providers_documented_endpoints() -> None:
    assert DEFAULT_VERIFY_URLS == {
        ChallengeProvider.TURNSTILE: "https://challenges.cloudflare.com/turnstile/v0/siteverify",
        ChallengeProvider.HCAPTCHA: "https://api.hcaptcha.com/siteverify",
        ChallengeProvider.RECAPTCHA: "https://www.google.com/recaptcha/api/siteverify",
    }


# -- verdicts the provider gives -------------------------------------------------------


@pytest.mark.parametrize("provider", ALL_PROVIDERS)
async def test_a_token_the_provider_accepts_passes(
    verifier: HttpChallengeVerifier, fake: FakeProvider, provider: ChallengeProvider
) -> None:
    verdict = await verifier.verify(challenge(PASS_SECRET, provider), TOKEN, None)

    assert verdict is ChallengeVerdict.PASSED
    assert [r.provider for r in fake.requests] == [provider]


@pytest.mark.parametrize("provider", ALL_PROVIDERS)
async def test_a_token_the_provider_refuses_is_rejected(
    verifier: HttpChallengeVerifier, fake: FakeProvider, provider: ChallengeProvider
) -> None:
    verdict = await verifier.verify(challenge(FAIL_SECRET, provider), TOKEN, None)

    assert verdict is ChallengeVerdict.REJECTED
    assert [r.provider for r in fake.requests] == [provider]


@pytest.mark.parametrize("provider", ALL_PROVIDERS)
async def test_an_already_spent_token_is_rejected(
    verifier: HttpChallengeVerifier, provider: ChallengeProvider
) -> None:
    verdict = await verifier.verify(challenge(SPENT_SECRET, provider), TOKEN, None)

    assert verdict is ChallengeVerdict.REJECTED


@pytest.mark.parametrize(
    "code",
    [
        "missing-input-response",
        "invalid-input-response",
        "timeout-or-duplicate",
        "already-seen-response",
        "invalid-or-already-seen-response",
        "expired-input-response",
        "bad-request",
    ],
)
async def test_every_documented_token_error_is_rejected(
    verifier: HttpChallengeVerifier, fake: FakeProvider, code: str
) -> None:
    fake.body = {"success": False, "error-codes": [code]}

    verdict = await verifier.verify(challenge(PASS_SECRET, ChallengeProvider.HCAPTCHA), TOKEN, None)

    assert verdict is ChallengeVerdict.REJECTED


async def test_a_token_error_beside_an_unknown_code_is_still_rejected(
    verifier: HttpChallengeVerifier, fake: FakeProvider
) -> None:
    fake.body = {"success": False, "error-codes": ["brand-new-code", "invalid-input-response"]}

    verdict = await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    assert verdict is ChallengeVerdict.REJECTED


async def test_an_empty_token_is_rejected_without_asking_the_provider(
    verifier: HttpChallengeVerifier, fake: FakeProvider
) -> None:
    verdict = await verifier.verify(challenge(PASS_SECRET), "", "203.0.113.7")

    assert verdict is ChallengeVerdict.REJECTED
    assert fake.requests == []


# -- the operator's configuration is wrong ---------------------------------------------


@pytest.mark.parametrize("provider", ALL_PROVIDERS)
async def test_an_unknown_secret_makes_the_provider_unavailable_and_logs_an_error(
    verifier: HttpChallengeVerifier,
    provider: ChallengeProvider,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)

    verdict = await verifier.verify(challenge(UNKNOWN_SECRET, provider), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE
    [record] = [r for r in caplog.records if r.name == LOGGER]
    assert record.levelno == logging.ERROR
    assert provider.value in record.getMessage()
    assert "invalid-input-secret" in record.getMessage()


@pytest.mark.parametrize(
    "codes",
    [
        ["missing-input-secret"],
        ["sitekey-secret-mismatch"],
        # A wrong secret means the token was never judged, whatever else is listed.
        ["invalid-input-secret", "invalid-input-response"],
    ],
)
async def test_a_misconfigured_secret_is_unavailable_not_rejected(
    verifier: HttpChallengeVerifier,
    fake: FakeProvider,
    codes: list[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    fake.body = {"success": False, "error-codes": codes}

    verdict = await verifier.verify(challenge(PASS_SECRET, ChallengeProvider.HCAPTCHA), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE
    assert [r.levelno for r in caplog.records if r.name == LOGGER] == [logging.ERROR]


async def test_a_provider_without_a_configured_url_is_unavailable(
    client: httpx.AsyncClient, fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    verifier = HttpChallengeVerifier(
        client, {ChallengeProvider.TURNSTILE: fake.url(ChallengeProvider.TURNSTILE)}
    )

    verdict = await verifier.verify(challenge(PASS_SECRET, ChallengeProvider.HCAPTCHA), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE
    assert fake.requests == []
    assert [r.levelno for r in caplog.records if r.name == LOGGER] == [logging.ERROR]


# -- the provider could not judge -------------------------------------------------------


@pytest.mark.parametrize(
    "codes", [["internal-error"], ["brand-new-code"], [], "not-a-list-of-codes"]
)
async def test_a_failure_without_a_token_error_is_unavailable(
    verifier: HttpChallengeVerifier,
    fake: FakeProvider,
    codes: object,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    fake.body = {"success": False, "error-codes": codes}

    verdict = await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE
    assert [r.levelno for r in caplog.records if r.name == LOGGER] == [logging.WARNING]


@pytest.mark.parametrize("status", [500, 502, 503, 429, 404])
async def test_a_provider_answering_with_an_error_status_is_unavailable(
    verifier: HttpChallengeVerifier,
    fake: FakeProvider,
    status: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    fake.status = status

    verdict = await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE
    [record] = [r for r in caplog.records if r.name == LOGGER]
    assert record.levelno == logging.WARNING
    assert "turnstile" in record.getMessage()
    assert str(status) in record.getMessage()


async def test_a_provider_slower_than_the_timeout_is_unavailable(
    client: httpx.AsyncClient, fake: FakeProvider
) -> None:
    verifier = HttpChallengeVerifier(client, fake.urls, timeout=0.2)
    fake.delay = 1.0

    started = time.monotonic()
    verdict = await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE
    assert time.monotonic() - started < 0.9  # gave up at the timeout, not at the answer


async def test_an_unreachable_provider_is_unavailable(client: httpx.AsyncClient) -> None:
    url = f"http://127.0.0.1:{closed_port()}/turnstile/v0/siteverify"
    verifier = HttpChallengeVerifier(client, {ChallengeProvider.TURNSTILE: url}, timeout=1.0)

    verdict = await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE


@pytest.mark.parametrize("url", ["http://[::1", "ftp://127.0.0.1/siteverify", "not a url"])
async def test_a_malformed_siteverify_url_is_unavailable(
    client: httpx.AsyncClient, url: str
) -> None:
    verifier = HttpChallengeVerifier(client, {ChallengeProvider.TURNSTILE: url})

    verdict = await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE


async def test_a_garbage_body_is_unavailable(
    verifier: HttpChallengeVerifier, fake: FakeProvider
) -> None:
    fake.garbage = True

    verdict = await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE


@pytest.mark.parametrize(
    "body",
    [{}, {"success": "true"}, {"success": 1}, {"success": None}],
    ids=["no-success", "string", "number", "null"],
)
async def test_an_answer_without_a_boolean_success_is_unavailable(
    verifier: HttpChallengeVerifier, fake: FakeProvider, body: dict[str, object]
) -> None:
    fake.body = body

    verdict = await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE


async def test_an_oversized_answer_is_unavailable(
    verifier: HttpChallengeVerifier, fake: FakeProvider
) -> None:
    fake.body = {"success": True, "padding": "x" * 100_000}

    verdict = await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    assert verdict is ChallengeVerdict.UNAVAILABLE


# -- reCAPTCHA v3 scores ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (0.9, ChallengeVerdict.PASSED),
        (RECAPTCHA_MIN_SCORE, ChallengeVerdict.PASSED),
        (0.3, ChallengeVerdict.REJECTED),
        (0.0, ChallengeVerdict.REJECTED),
        (None, ChallengeVerdict.PASSED),  # v2: no score, success decides
    ],
)
async def test_a_recaptcha_score_below_the_threshold_is_rejected(
    verifier: HttpChallengeVerifier,
    fake: FakeProvider,
    score: float | None,
    expected: ChallengeVerdict,
) -> None:
    fake.recaptcha_score = score

    verdict = await verifier.verify(
        challenge(PASS_SECRET, ChallengeProvider.RECAPTCHA), TOKEN, None
    )

    assert verdict is expected


async def test_a_recaptcha_score_that_is_not_a_number_is_unavailable(
    verifier: HttpChallengeVerifier, fake: FakeProvider
) -> None:
    fake.body = {"success": True, "score": "high"}

    verdict = await verifier.verify(
        challenge(PASS_SECRET, ChallengeProvider.RECAPTCHA), TOKEN, None
    )

    assert verdict is ChallengeVerdict.UNAVAILABLE


async def test_a_score_from_another_provider_is_not_read_as_a_recaptcha_score(
    verifier: HttpChallengeVerifier, fake: FakeProvider
) -> None:
    # hCaptcha Enterprise scores risk: 0.1 there is a likely human, not a bot.
    fake.body = {"success": True, "score": 0.1}

    verdict = await verifier.verify(challenge(PASS_SECRET, ChallengeProvider.HCAPTCHA), TOKEN, None)

    assert verdict is ChallengeVerdict.PASSED


# -- what is sent ----------------------------------------------------------------------


@pytest.mark.parametrize("provider", ALL_PROVIDERS)
async def test_the_secret_token_and_remote_ip_are_posted_as_a_form(
    verifier: HttpChallengeVerifier, fake: FakeProvider, provider: ChallengeProvider
) -> None:
    await verifier.verify(challenge(PASS_SECRET, provider), TOKEN, "203.0.113.7")

    [request] = fake.requests
    assert request.provider is provider
    assert request.content_type == "application/x-www-form-urlencoded"
    assert request.form == {"secret": PASS_SECRET, "response": TOKEN, "remoteip": "203.0.113.7"}


async def test_no_remote_ip_is_posted_when_it_is_unknown(
    verifier: HttpChallengeVerifier, fake: FakeProvider
) -> None:
    await verifier.verify(challenge(PASS_SECRET), TOKEN, None)

    [request] = fake.requests
    assert request.form == {"secret": PASS_SECRET, "response": TOKEN}


# -- what is logged --------------------------------------------------------------------


async def test_neither_the_secret_nor_the_token_appears_in_the_logs(
    client: httpx.AsyncClient, fake: FakeProvider, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, httpx's and httpcore's too
    secret_challenge = challenge(UNKNOWN_SECRET)
    verifier = HttpChallengeVerifier(client, fake.urls, timeout=0.2)
    unreachable = HttpChallengeVerifier(
        client, {ChallengeProvider.TURNSTILE: f"http://127.0.0.1:{closed_port()}/x"}
    )

    await verifier.verify(secret_challenge, TOKEN, "203.0.113.7")  # unknown secret
    # A provider echoing the secret and token back as error codes must not leak them.
    fake.body = {"success": False, "error-codes": [UNKNOWN_SECRET, TOKEN, "invalid-input-secret"]}
    await verifier.verify(secret_challenge, TOKEN, None)
    fake.body = {"success": False, "error-codes": [TOKEN]}
    await verifier.verify(secret_challenge, TOKEN, None)
    fake.body = None
    fake.status = 500
    await verifier.verify(secret_challenge, TOKEN, None)
    fake.status = None
    fake.garbage = True
    await verifier.verify(secret_challenge, TOKEN, None)
    fake.garbage = False
    fake.delay = 1.0
    await verifier.verify(secret_challenge, TOKEN, None)
    await unreachable.verify(secret_challenge, TOKEN, None)

    ours = [r for r in caplog.records if r.name == LOGGER]
    assert len(ours) == 7  # every unavailable path above logged once
    for record in caplog.records:
        text = f"{record.getMessage()} {record.args!r} {record.exc_text or ''}"
        assert UNKNOWN_SECRET not in text
        assert TOKEN not in text


# -- the fake itself -------------------------------------------------------------------


async def test_the_fake_answers_a_missing_token_with_missing_input_response(
    client: httpx.AsyncClient, fake: FakeProvider
) -> None:
    answer = await client.post(
        fake.url(ChallengeProvider.TURNSTILE), data={"secret": PASS_SECRET, "response": ""}
    )

    assert answer.json() == {"success": False, "error-codes": ["missing-input-response"]}


def test_the_fake_stops_cleanly_even_while_an_answer_is_delayed() -> None:
    with FakeProvider() as fake:
        fake.delay = 30.0
        with socket.create_connection(("127.0.0.1", int(fake.base_url.rsplit(":", 1)[1]))) as s:
            s.sendall(
                b"POST /turnstile/v0/siteverify HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
            )
            deadline = time.monotonic() + 2.0
            while not fake.requests and time.monotonic() < deadline:
                time.sleep(0.01)  # until the handler has the request and is delaying
            assert fake.requests
            started = time.monotonic()
            fake.stop()
            assert time.monotonic() - started < 2.0
