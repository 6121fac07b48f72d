"""The bot-challenge verifier that asks Turnstile, hCaptcha or reCAPTCHA over HTTP."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence

import anyio
import httpx

from intake.domain.model import Challenge, ChallengeProvider
from intake.ports.challenge import DEFAULT_TIMEOUT, DEFAULT_VERIFY_URLS, ChallengeVerdict

logger = logging.getLogger(__name__)

# reCAPTCHA v3 scores run from 0.0 (a bot) to 1.0 (a human); Google suggests 0.5 as
# the starting threshold. v2 answers carry no score and are judged by `success` alone.
RECAPTCHA_MIN_SCORE = 0.5

# Error codes that say the visitor's token is bad (missing, malformed, expired or
# already spent): the provider did judge it, so the submission is refused.
_TOKEN_ERRORS = frozenset(
    {
        "missing-input-response",
        "invalid-input-response",
        "timeout-or-duplicate",  # Turnstile, reCAPTCHA
        "already-seen-response",  # hCaptcha
        "invalid-or-already-seen-response",  # hCaptcha
        "expired-input-response",  # hCaptcha
        "bad-request",  # all three: the request as sent by the visitor is malformed
    }
)

# Error codes that say the operator's configuration is wrong: the provider could not
# judge the token at all, so the submission must not be refused for it.
_CONFIG_ERRORS = frozenset(
    {
        "missing-input-secret",
        "invalid-input-secret",
        "sitekey-secret-mismatch",  # hCaptcha
        "not-using-dummy-passcode",  # hCaptcha: a test secret used with a real sitekey
    }
)

# The answer is a small JSON object; anything much larger is not a siteverify answer.
_MAX_BODY_BYTES = 64 * 1024

# Provider error codes are short kebab-case words; only such strings reach the logs.
_SAFE_CODE = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_MAX_LOGGED_CODES = 5


class _UnavailableError(Exception):
    """The provider gave no usable answer; `reason` is safe to log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class HttpChallengeVerifier:
    """Verifies a challenge token with the provider's siteverify endpoint.

    The `client` belongs to the caller, which opens and closes it. `timeout` bounds
    the whole verification (connect, send and read together), in seconds.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        verify_urls: Mapping[ChallengeProvider, str] = DEFAULT_VERIFY_URLS,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self._client = client
        self._verify_urls = dict(verify_urls)
        self._timeout = timeout

    async def verify(
        self, challenge: Challenge, token: str, remote_ip: str | None
    ) -> ChallengeVerdict:
        provider = challenge.provider
        if not token:
            # Nothing to ask about: a missing token is the visitor's failure, and the
            # answer must not depend on whether the provider happens to be up.
            return ChallengeVerdict.REJECTED
        url = self._verify_urls.get(provider)
        if url is None:
            logger.error("challenge provider %s has no siteverify URL configured", provider)
            return ChallengeVerdict.UNAVAILABLE
        try:
            answer = await self._ask(url, challenge.secret, token, remote_ip)
        except _UnavailableError as exc:
            logger.warning("challenge provider %s unavailable: %s", provider, exc.reason)
            return ChallengeVerdict.UNAVAILABLE
        return _judge(provider, answer, secrets=(challenge.secret, token))

    async def _ask(
        self, url: str, secret: str, token: str, remote_ip: str | None
    ) -> Mapping[str, object]:
        form = {"secret": secret, "response": token}
        if remote_ip:
            form["remoteip"] = remote_ip
        # httpx.Timeout limits each phase; fail_after bounds the total, so a provider
        # that trickles its answer cannot hold the submission longer than `timeout`.
        try:
            with anyio.fail_after(self._timeout):
                async with self._client.stream(
                    "POST",
                    url,
                    data=form,
                    headers={"Accept": "application/json"},
                    timeout=httpx.Timeout(self._timeout),
                ) as response:
                    if response.status_code != httpx.codes.OK:
                        raise _UnavailableError(f"HTTP status {response.status_code}")
                    body = await _read_capped(response)
        except TimeoutError as exc:
            raise _UnavailableError("timed out") from exc
        except httpx.TimeoutException as exc:
            raise _UnavailableError(f"timed out ({type(exc).__name__})") from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            # The exception's message may quote the request; its type name is enough.
            raise _UnavailableError(f"request failed ({type(exc).__name__})") from exc
        try:
            parsed: object = json.loads(body)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError alike
            raise _UnavailableError("answer is not JSON") from exc
        if not isinstance(parsed, dict):
            raise _UnavailableError("answer is not a JSON object")
        return parsed


async def _read_capped(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > _MAX_BODY_BYTES:
            raise _UnavailableError("answer too large")
        chunks.append(chunk)
    return b"".join(chunks)


def _judge(
    provider: ChallengeProvider, answer: Mapping[str, object], secrets: Sequence[str]
) -> ChallengeVerdict:
    success = answer.get("success")
    if not isinstance(success, bool):
        logger.warning("challenge provider %s unavailable: answer has no boolean success", provider)
        return ChallengeVerdict.UNAVAILABLE
    if success:
        return _judge_score(provider, answer)
    codes = _error_codes(answer)
    # Configuration first: with a wrong secret the provider never judged the token,
    # whatever else it lists.
    if codes & _CONFIG_ERRORS:
        logger.error(
            "challenge provider %s refused the secret (misconfigured): %s",
            provider,
            _loggable(codes, secrets),
        )
        return ChallengeVerdict.UNAVAILABLE
    if codes & _TOKEN_ERRORS:
        return ChallengeVerdict.REJECTED
    # internal-error, an unknown code or none at all: the provider did not say the
    # token is bad, so the submission is kept as unverified rather than refused.
    logger.warning(
        "challenge provider %s unavailable: failed without a token error: %s",
        provider,
        _loggable(codes, secrets),
    )
    return ChallengeVerdict.UNAVAILABLE


def _judge_score(provider: ChallengeProvider, answer: Mapping[str, object]) -> ChallengeVerdict:
    # Only reCAPTCHA's score means "likely human" (hCaptcha Enterprise's score is a
    # risk score, the other way round), so it is read for reCAPTCHA alone.
    if provider is not ChallengeProvider.RECAPTCHA or "score" not in answer:
        return ChallengeVerdict.PASSED
    score = answer["score"]
    if isinstance(score, bool) or not isinstance(score, int | float):
        logger.warning("challenge provider %s unavailable: score is not a number", provider)
        return ChallengeVerdict.UNAVAILABLE
    # reCAPTCHA v3: a token from a visitor Google scores as a likely bot is refused.
    if score < RECAPTCHA_MIN_SCORE:
        return ChallengeVerdict.REJECTED
    return ChallengeVerdict.PASSED


def _error_codes(answer: Mapping[str, object]) -> frozenset[str]:
    raw = answer.get("error-codes")
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        return frozenset()
    return frozenset(code for code in raw if isinstance(code, str))


def _loggable(codes: frozenset[str], secrets: Sequence[str]) -> str:
    """The error codes fit for a log line: short words only, never a secret or token."""
    safe = sorted(
        code
        for code in codes
        if _SAFE_CODE.fullmatch(code) and not any(s and s in code for s in secrets)
    )
    if not safe:
        return "no error codes"
    return ", ".join(safe[:_MAX_LOGGED_CODES])
