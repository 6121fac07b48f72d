"""The SpamOpinion port over Akismet, through the `akismet` package's AsyncClient
(docs/scoring.md, "Akismet").

The package always addresses Akismet's own host; `_Rebased` sends its requests to the
configured API URL instead (a proxy, a compatible service, a test's local server).
Neither the key nor anything submitted reaches a log: the package's exceptions may quote
the key, so only their class is named.
"""

from __future__ import annotations

import logging

import akismet
import anyio
import httpx

from intake.domain.spam.model import Label
from intake.domain.spam.opinion import CONTACT_FORM, OpinionQuery
from intake.ports.spam_opinion import (
    DEFAULT_AKISMET_API_URL,
    DEFAULT_CHECK_TIMEOUT,
    REPORT_TIMEOUT,
    OpinionUnavailableError,
)

logger = logging.getLogger(__name__)

# What the package's client, and so every failure of a request, may raise.
_FAILURES = (akismet.AkismetError, httpx.HTTPError, OSError)


class _Rebased(httpx.AsyncBaseTransport):
    """Sends each request to `base` in place of the scheme, host and port it names,
    `base`'s path put before its own."""

    def __init__(self, base: str, inner: httpx.AsyncBaseTransport) -> None:
        self._base = httpx.URL(base.rstrip("/"))
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        base = self._base
        request.url = request.url.copy_with(
            scheme=base.scheme,
            host=base.host,
            port=base.port,
            raw_path=base.raw_path.rstrip(b"/") + request.url.raw_path,
        )
        request.headers["Host"] = request.url.netloc.decode("ascii")
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _arguments(query: OpinionQuery) -> akismet.AkismetArguments:
    arguments: akismet.AkismetArguments = {
        "comment_type": CONTACT_FORM,
        "comment_content": query.content,
    }
    if query.author_email:
        arguments["comment_author_email"] = query.author_email
    if query.user_agent:
        arguments["user_agent"] = query.user_agent
    if query.referrer:
        arguments["referrer"] = query.referrer
    return arguments


class AkismetOpinion:
    """One client for the process, closed by `aclose`. `check` gives up after
    `timeout` seconds, whatever the network does; a report may take REPORT_TIMEOUT."""

    def __init__(
        self,
        key: str,
        site_url: str,
        *,
        timeout: float = DEFAULT_CHECK_TIMEOUT,
        api_url: str = DEFAULT_AKISMET_API_URL,
    ) -> None:
        self._timeout = timeout
        http = httpx.AsyncClient(
            headers={"User-Agent": akismet.USER_AGENT},
            timeout=max(timeout, REPORT_TIMEOUT),
            transport=_Rebased(api_url, httpx.AsyncHTTPTransport()),
        )
        self._http = http
        self._client = akismet.AsyncClient(akismet.Config(key=key, url=site_url), http_client=http)

    async def check(self, query: OpinionQuery) -> Label | None:
        answer: akismet.CheckResponse | None = None
        try:
            with anyio.move_on_after(self._timeout):
                answer = await self._client.comment_check(query.user_ip, **_arguments(query))
        except _FAILURES as error:
            _log_failure("check", error)
            return None
        if answer is None:
            logger.warning("akismet gave no verdict in time", extra={"timeout": self._timeout})
            return None
        # DISCARD is Akismet's "blatant spam": spam all the same, kept for the owner.
        return Label.HAM if answer is akismet.CheckResponse.HAM else Label.SPAM

    async def report(self, label: Label, query: OpinionQuery) -> None:
        submit = self._client.submit_spam if label is Label.SPAM else self._client.submit_ham
        try:
            with anyio.fail_after(REPORT_TIMEOUT):
                await submit(query.user_ip, **_arguments(query))
        except TimeoutError:
            raise OpinionUnavailableError("akismet did not answer in time") from None
        except _FAILURES as error:
            _log_failure("report", error)
            raise OpinionUnavailableError(f"akismet refused: {type(error).__name__}") from None

    async def aclose(self) -> None:
        await self._http.aclose()


def _log_failure(operation: str, error: BaseException) -> None:
    # The class only: the package's messages may quote the key or Akismet's answer.
    level = logging.ERROR if isinstance(error, akismet.APIKeyError) else logging.WARNING
    logger.log(
        level,
        "akismet request failed",
        extra={"operation": operation, "error": type(error).__name__},
    )
