"""The SpamOpinion port over Akismet, through the `akismet` package's AsyncClient
(docs/scoring.md, "Akismet").

The package always addresses Akismet's own host; `_Rebased` sends its requests to the
configured API URL instead (a proxy, a compatible service, a test's local server).
Neither the key nor anything submitted reaches a log: the package's exceptions may quote
the key, so only their class is named.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

import akismet
import anyio
import httpx

from intake.adapters.tls import client_tls
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
# While Akismet gives no verdict, one line says so at most this often.
WARN_EVERY = 60.0


class _Outage:
    """Checks that got no verdict: said at the first, then at most once a WARN_EVERY
    while they go on, with how many there were, and once when Akismet answers again. A
    busy form's every submission must not write a line of its own while Akismet is down."""

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self._since: float | None = None
        self._last_line = -math.inf
        self._unsaid = 0

    def missed(self, reason: str, level: int = logging.WARNING) -> None:
        now = self._monotonic()
        if self._since is None:
            self._since = now
        self._unsaid += 1
        if now - self._last_line < WARN_EVERY:
            return
        logger.log(
            level,
            "akismet gave no verdict: the built-in filter decides alone",
            extra={
                "reason": reason,
                "checks": self._unsaid,
                "down_for_s": round(now - self._since),
            },
        )
        self._last_line = now
        self._unsaid = 0

    def answered(self) -> None:
        if self._since is None:
            return
        down_for = self._monotonic() - self._since
        logger.info("akismet answers again", extra={"down_for_s": round(down_for)})
        self._since = None
        self._last_line = -math.inf
        self._unsaid = 0


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
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._timeout = timeout
        self._outage = _Outage(monotonic)
        http = httpx.AsyncClient(
            headers={"User-Agent": akismet.USER_AGENT},
            timeout=max(timeout, REPORT_TIMEOUT),
            transport=_Rebased(api_url, httpx.AsyncHTTPTransport(verify=client_tls())),
        )
        self._http = http
        self._client = akismet.AsyncClient(akismet.Config(key=key, url=site_url), http_client=http)

    async def check(self, query: OpinionQuery) -> Label | None:
        answer: akismet.CheckResponse | None = None
        try:
            with anyio.move_on_after(self._timeout):
                answer = await self._client.comment_check(query.user_ip, **_arguments(query))
        except _FAILURES as error:
            # The class only: the package's messages may quote the key or its answer.
            refused = isinstance(error, akismet.APIKeyError)
            self._outage.missed(type(error).__name__, logging.ERROR if refused else logging.WARNING)
            return None
        if answer is None:
            self._outage.missed(f"no answer within {self._timeout:g} s")
            return None
        self._outage.answered()
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
            # Said by the relay, as any delivery's failure; the class only, as above.
            raise OpinionUnavailableError(f"akismet refused: {type(error).__name__}") from None

    async def aclose(self) -> None:
        await self._http.aclose()
