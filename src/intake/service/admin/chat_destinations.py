"""A form's chat destinations, for an operator (`intake destination`) and for a
workspace's programs and owners (the management API, the dashboard): added once their
URL or bot token passes the webhook rule, listed without their secret, removed with
their undelivered deliveries, and sent a test message on request."""

from __future__ import annotations

import re

from attrs import frozen

from intake.domain.chat import DEFAULT_TELEGRAM_API_URL, ChatApp, ChatDestination, telegram_send_url
from intake.domain.destination_limits import DestinationLimits, LimitReached
from intake.domain.listing import DEFAULT_PAGE
from intake.ports.clock import Clock
from intake.ports.deliveries import DeliveryRecord
from intake.ports.store import Store
from intake.service.admin.bounds import CHATS_BOUND, form_full
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.forms import live_form
from intake.service.admin.mint import IdMint
from intake.service.admin.ownership import Ownership, check_plausible_id
from intake.service.admin.queued_tests import DestinationTests
from intake.service.admin.short_lists import NO_TIME, Position, ShortPage, short_page
from intake.service.admin.targets import TargetCheck

KIND, URL, TOKEN, CHAT_ID = "kind", "url", "telegram_token", "telegram_chat_id"
WHAT = "chat destination"

# A bot token as BotFather gives it: the bot's number, a colon, 35 URL-safe characters
# (a little leeway either way). It goes into the request's path, so nothing else may.
_BOT_TOKEN = re.compile(r"[0-9]{1,20}:[A-Za-z0-9_-]{20,100}")
# A chat: its number (negative for groups and channels) or a public @channelusername.
_CHAT_ID = re.compile(r"-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31}")
_MAX_URL = 2048


@frozen
class ChatRequest:
    """A chat destination as an owner asks for it (`kind` not yet checked)."""

    kind: str
    url: str | None = None
    telegram_token: str | None = None
    telegram_chat_id: str | None = None
    include_flagged: bool = False


class Chats:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        mint: IdMint,
        *,
        ownership: Ownership,
        targets: TargetCheck,
        tests: DestinationTests,
        limits: DestinationLimits,
        telegram_api_url: str = DEFAULT_TELEGRAM_API_URL,
    ) -> None:
        self._store = store
        self._clock = clock
        self._mint = mint
        self._owned = ownership
        self._targets = targets
        self._tests = tests
        self._limits = limits
        self._telegram_api_url = telegram_api_url

    async def add(self, form_id: str, request: ChatRequest) -> ChatDestination:
        """A new chat destination of the form: a Slack, Discord or Teams incoming-webhook
        URL, or a Telegram bot token and chat; refused (AdminError naming the input)
        when the relay could not send to it."""
        await live_form(self._store.forms, form_id)
        app = _app(request.kind)
        if app.by_url:
            if request.telegram_token is not None or request.telegram_chat_id is not None:
                raise AdminError(f"a {app.value} destination takes a url only", field=TOKEN)
            secret, chat_id = await self._chat_url(request.url), None
        else:
            if request.url is not None:
                raise AdminError("a telegram destination takes a bot token, not a url", field=URL)
            secret, chat_id = await self._telegram(request)
        destination = ChatDestination(
            destination_id=self._mint.id("chat"),
            form_id=form_id,
            app=app,
            secret=secret,
            chat_id=chat_id,
            include_flagged=request.include_flagged,
            created_at=self._clock.now(),
        )
        bound = self._limits.chats
        try:
            await self._store.destinations.add_chat(destination, at_most=bound)
        except LimitReached:
            raise form_full("chat destinations", bound, CHATS_BOUND, KIND) from None
        return destination

    async def all(self, form_id: str) -> list[ChatDestination]:
        """The form's chat destinations."""
        await live_form(self._store.forms, form_id)
        return await self._store.destinations.list_chats(form_id)

    async def remove(self, destination_id: str) -> None:
        """Removes the destination; its undelivered deliveries are dropped with it."""
        check_plausible_id(destination_id, WHAT)
        if not await self._store.destinations.remove_chat(destination_id):
            raise NotFoundError(f"no {WHAT} {destination_id!r}")

    async def test(self, destination_id: str) -> DeliveryRecord:
        """Queues a `chat.test` to this destination only (queued_tests.py): any
        workspace's, for an operator (`intake destination test`)."""
        destination = await self._chat(destination_id)
        form = await live_form(self._store.forms, destination.form_id)
        return await self._tests.chat(destination, form.workspace_id)

    async def owned(self, workspace_id: str, destination_id: str) -> ChatDestination:
        """The workspace's chat destination `destination_id` (ownership.py's rule)."""
        return await self._owned.chat(workspace_id, destination_id)

    async def page(
        self, workspace_id: str, form_id: str, limit: int = DEFAULT_PAGE, cursor: str | None = None
    ) -> ShortPage[ChatDestination]:
        """`limit` of the workspace's form's chat destinations after `cursor`, newest
        first."""
        await self._owned.form(workspace_id, form_id)
        chats = await self._store.destinations.list_chats(form_id)
        return short_page(chats, _chat_position, limit, cursor)

    async def add_owned(
        self, workspace_id: str, form_id: str, request: ChatRequest
    ) -> ChatDestination:
        """`add` to the workspace's form."""
        await self._owned.form(workspace_id, form_id)
        return await self.add(form_id, request)

    async def remove_owned(self, workspace_id: str, destination_id: str) -> None:
        """Removes the destination; its undelivered deliveries are dropped with it."""
        destination = await self.owned(workspace_id, destination_id)
        await self.remove(destination.destination_id)

    async def test_owned(self, workspace_id: str, destination_id: str) -> DeliveryRecord:
        """Queues a `chat.test` to the workspace's destination only."""
        destination = await self.owned(workspace_id, destination_id)
        return await self._tests.chat(destination, workspace_id)

    async def _chat(self, destination_id: str) -> ChatDestination:
        check_plausible_id(destination_id, WHAT)
        destination = await self._store.destinations.get_chat(destination_id)
        if destination is None:
            raise NotFoundError(f"no {WHAT} {destination_id!r}")
        return destination

    async def _chat_url(self, value: str | None) -> str:
        """The incoming-webhook URL, once it passes the webhook rule the relay applies
        at every delivery. The refusal never repeats the URL: it is the secret."""
        text = (value or "").strip()
        if not text:
            raise AdminError("the incoming-webhook url is required", field=URL)
        if len(text) > _MAX_URL:
            raise AdminError(f"the url is longer than {_MAX_URL} characters", field=URL)
        await self._targets.check(text, URL)
        return text

    async def _telegram(self, request: ChatRequest) -> tuple[str, str]:
        token = (request.telegram_token or "").strip()
        chat_id = (request.telegram_chat_id or "").strip()
        if not _BOT_TOKEN.fullmatch(token):
            raise AdminError(
                "not a Telegram bot token (digits, a colon, then 35 characters)", field=TOKEN
            )
        if not _CHAT_ID.fullmatch(chat_id):
            raise AdminError("not a Telegram chat id (a number, or @channelname)", field=CHAT_ID)
        await self._targets.check(telegram_send_url(self._telegram_api_url, token), TOKEN)
        return token, chat_id


def _app(kind: str) -> ChatApp:
    try:
        return ChatApp(kind.strip().lower())
    except ValueError:
        choices = ", ".join(app.value for app in ChatApp)
        raise AdminError(f"the kind must be one of {choices}", field=KIND) from None


def _chat_position(destination: ChatDestination) -> Position:
    return (destination.created_at or NO_TIME, destination.destination_id)
