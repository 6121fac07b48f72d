"""intake as a library: build the service in-process with the adapters you choose, and
submit without HTTP. Async first, with a blocking wrapper for synchronous callers."""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager, suppress
from typing import Any, Unpack

from anyio.from_thread import BlockingPortal, start_blocking_portal
from attrs import evolve, frozen

from intake.config import Settings
from intake.containers import opened
from intake.domain.model import FieldData
from intake.library_runtime import LibraryContainer, PortOverrides, Runtime, open_runtime
from intake.service.admin import (
    ActivityCounts,
    Chats,
    Deliveries,
    Exports,
    Forms,
    Keys,
    OwnerServices,
    Privacy,
    Recipients,
    SpamFilter,
    Submissions,
    Triage,
    Webhooks,
    Workspaces,
)
from intake.service.messages import (
    Accepted,
    FieldsBody,
    Outcome,
    PublicTarget,
    RawBody,
    ServerTarget,
    SubmitRequest,
)


@frozen
class SubmissionResult:
    """What the HTTP endpoints would have answered, as a value."""

    ok: bool
    status: int
    submission_id: str | None = None
    replayed: bool = False
    error_code: str | None = None
    error_message: str | None = None
    error_fields: Mapping[str, str] | None = None
    retry_after: int | None = None

    @classmethod
    def of(cls, outcome: Outcome) -> SubmissionResult:
        if isinstance(outcome, Accepted):
            return cls(
                ok=True,
                status=outcome.status,
                submission_id=outcome.submission_id,
                replayed=outcome.replayed,
            )
        rejection = outcome.rejection
        return cls(
            ok=False,
            status=rejection.status,
            error_code=rejection.code.value,
            error_message=rejection.message,
            error_fields=rejection.fields,
            retry_after=rejection.retry_after,
        )


async def _one(body: bytes) -> AsyncIterator[bytes]:
    yield body


class Intake:
    """A running intake in this process. Open it with `Intake.open(...)`."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @classmethod
    def open(
        cls,
        settings: Settings | None = None,
        *,
        database_url: str | None = None,
        **ports: Unpack[PortOverrides],
    ) -> AbstractAsyncContextManager[Intake]:
        """`ports` replace adapters by name: store, clock, id_source, rate_limiter,
        challenge, webhook_sender, mailer, blobs, spam_opinion (see intake.ports).
        Without settings, the INTAKE_* variables are read."""
        chosen = settings or Settings.from_env()
        if database_url is not None:
            chosen = _with_database(chosen, database_url)
        return _open(cls, chosen, ports)

    @classmethod
    @asynccontextmanager
    async def running(cls, container: LibraryContainer) -> AsyncIterator[Intake]:
        """Runs on `container`, whose providers a program may have overridden first
        (`container.store.override(InMemoryStore())`): its resources are opened here and
        closed on exit; a part given by overriding stays open."""
        async with opened(container, container.library) as runtime:
            yield cls(runtime)

    @property
    def services(self) -> OwnerServices:
        """Every owner-side service, as one value (each is also a property of its own)."""
        return self.runtime.services

    @property
    def workspaces(self) -> Workspaces:
        """Workspaces: creating, suspending, changing and metering them."""
        return self.runtime.services.workspaces

    @property
    def forms(self) -> Forms:
        """Forms: creating, changing, previewing their mail, rotating keys, deleting."""
        return self.runtime.services.forms

    @property
    def keys(self) -> Keys:
        """API keys: creating, listing and revoking a workspace's keys."""
        return self.runtime.services.keys

    @property
    def submissions(self) -> Submissions:
        """Reading submissions: one by id, with its files and deliveries; a page of a form's."""
        return self.runtime.services.submissions

    @property
    def triage(self) -> Triage:
        """Triage: releasing a submission, marking it as spam, erasing it."""
        return self.runtime.services.triage

    @property
    def exports(self) -> Exports:
        """Exports: a form's submissions under a filter, CSV rows, and their files' content."""
        return self.runtime.services.exports

    @property
    def privacy(self) -> Privacy:
        """Privacy: erasing every submission that holds a person's address."""
        return self.runtime.services.privacy

    @property
    def webhooks(self) -> Webhooks:
        """A form's webhook endpoints: adding, listing, removing, testing."""
        return self.runtime.services.webhooks

    @property
    def recipients(self) -> Recipients:
        """A form's notification recipients: adding, listing, removing, testing, consent."""
        return self.runtime.services.recipients

    @property
    def chats(self) -> Chats:
        """A form's chat destinations (Slack, Discord, Teams, Telegram)."""
        return self.runtime.services.chats

    @property
    def deliveries(self) -> Deliveries:
        """Deliveries and the outbox: reading them and retrying."""
        return self.runtime.services.deliveries

    @property
    def spam(self) -> SpamFilter:
        """A workspace's spam filter: what it knows, and teaching it an owner's history."""
        return self.runtime.services.spam

    @property
    def activity(self) -> ActivityCounts:
        """Forms' submissions counted day by day."""
        return self.runtime.services.activity

    async def submit(
        self,
        public_form_key: str,
        fields: FieldData,
        *,
        client_ip: str = "127.0.0.1",
        origin: str | None = None,
        idempotency_key: str | None = None,
        challenge_token: str | None = None,
        user_agent: str | None = None,
        referrer: str | None = None,
    ) -> SubmissionResult:
        """Submits fields to a form as its public endpoint would. The visitor's user
        agent and referrer are what Akismet judges by, when it is asked."""
        request = SubmitRequest(
            target=PublicTarget(public_form_key),
            body=FieldsBody(dict(fields)),
            client_ip=client_ip,
            origin=origin,
            idempotency_key=idempotency_key,
            challenge_token=challenge_token,
            user_agent=user_agent,
            referrer=referrer,
        )
        return SubmissionResult.of(await self.runtime.pipeline.submit(request))

    async def submit_as_server(
        self,
        form_id: str,
        api_key: str,
        fields: FieldData,
        *,
        client_ip: str = "127.0.0.1",
        idempotency_key: str | None = None,
    ) -> SubmissionResult:
        """Submits as the server-side endpoint would, authenticated with an API key."""
        request = SubmitRequest(
            target=ServerTarget(form_id, f"Bearer {api_key}"),
            body=FieldsBody(dict(fields)),
            client_ip=client_ip,
            idempotency_key=idempotency_key,
        )
        return SubmissionResult.of(await self.runtime.pipeline.submit(request))

    async def submit_body(
        self,
        public_form_key: str,
        body: bytes,
        content_type: str,
        *,
        client_ip: str = "127.0.0.1",
        origin: str | None = None,
        idempotency_key: str | None = None,
    ) -> SubmissionResult:
        """Submits a raw body exactly as it would arrive over HTTP."""
        request = SubmitRequest(
            target=PublicTarget(public_form_key),
            body=RawBody(content_type, len(body), _one(body)),
            client_ip=client_ip,
            origin=origin,
            idempotency_key=idempotency_key,
        )
        return SubmissionResult.of(await self.runtime.pipeline.submit(request))


def _with_database(settings: Settings, database_url: str) -> Settings:
    return evolve(settings, database_url=database_url)


@asynccontextmanager
async def _open(
    cls: type[Intake], settings: Settings, ports: PortOverrides
) -> AsyncIterator[Intake]:
    async with open_runtime(settings, **ports) as runtime:
        yield cls(runtime)


_END = object()  # what `_next` gives for an iterator that has ended


async def _next(iterator: AsyncIterator[Any]) -> Any:
    # StopAsyncIteration is not let out of the event loop's thread as an exception.
    try:
        return await anext(iterator)
    except StopAsyncIteration:
        return _END


def _blocking_iterator(iterator: AsyncIterator[Any], portal: BlockingPortal) -> Iterator[Any]:
    """`iterator` for synchronous code, an item at a time: never collected whole, so a
    long export or a large file streams as it does to async callers."""
    try:
        while (item := portal.call(_next, iterator)) is not _END:
            yield item
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            # A portal already closed has had its event loop close the generator.
            with suppress(RuntimeError):
                portal.call(close)


class _Blocking:
    """An object's public members for synchronous code, through the portal: a coroutine
    method gives its value, a method giving an async iterator gives a blocking iterator,
    and a property its plain value. Everything runs in the event loop's thread."""

    def __init__(self, target: object, portal: BlockingPortal) -> None:
        self._target = target
        self._portal = portal

    def __dir__(self) -> list[str]:
        return [name for name in dir(self._target) if not name.startswith("_")]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if isinstance(inspect.getattr_static(type(self._target), name, None), property):
            return self._portal.call(getattr, self._target, name)
        member = getattr(self._target, name)
        if not callable(member):
            return member

        def call(*args: Any, **kwargs: Any) -> Any:
            result = self._portal.call(functools.partial(member, *args, **kwargs))
            if isinstance(result, AsyncIterator):
                return _blocking_iterator(result, self._portal)
            return result

        call.__name__ = name
        call.__doc__ = member.__doc__
        return call


class SyncIntake:
    """The same service for synchronous code: an event loop runs in a helper thread.
    Each owner-side service (`workspaces`, `forms`, ...) has every public member of its
    `Intake` counterpart, blocking: values for coroutines, iterators for async iterators
    (streamed an item at a time), plain values for properties."""

    def __init__(self, intake: Intake, portal: BlockingPortal) -> None:
        self._intake = intake
        self._portal = portal
        self.workspaces = _Blocking(intake.workspaces, portal)
        self.forms = _Blocking(intake.forms, portal)
        self.keys = _Blocking(intake.keys, portal)
        self.submissions = _Blocking(intake.submissions, portal)
        self.triage = _Blocking(intake.triage, portal)
        self.exports = _Blocking(intake.exports, portal)
        self.privacy = _Blocking(intake.privacy, portal)
        self.webhooks = _Blocking(intake.webhooks, portal)
        self.recipients = _Blocking(intake.recipients, portal)
        self.chats = _Blocking(intake.chats, portal)
        self.deliveries = _Blocking(intake.deliveries, portal)
        self.spam = _Blocking(intake.spam, portal)
        self.activity = _Blocking(intake.activity, portal)

    @classmethod
    @contextmanager
    def open(
        cls,
        settings: Settings | None = None,
        *,
        database_url: str | None = None,
        **ports: Unpack[PortOverrides],
    ) -> Iterator[SyncIntake]:
        """`Intake.open` for synchronous code: the same arguments, and the intake open
        until the block ends."""
        with (
            start_blocking_portal() as portal,
            portal.wrap_async_context_manager(
                Intake.open(settings, database_url=database_url, **ports)
            ) as intake,
        ):
            yield cls(intake, portal)

    def submit(self, public_form_key: str, fields: FieldData, **options: Any) -> SubmissionResult:
        """`Intake.submit`, blocking; `options` are its keyword arguments."""
        result: SubmissionResult = self._portal.call(
            lambda: self._intake.submit(public_form_key, fields, **options)
        )
        return result

    def submit_as_server(
        self, form_id: str, api_key: str, fields: FieldData, **options: Any
    ) -> SubmissionResult:
        """`Intake.submit_as_server`, blocking; `options` are its keyword arguments."""
        result: SubmissionResult = self._portal.call(
            lambda: self._intake.submit_as_server(form_id, api_key, fields, **options)
        )
        return result

    def submit_body(
        self, public_form_key: str, body: bytes, content_type: str, **options: Any
    ) -> SubmissionResult:
        """`Intake.submit_body`, blocking; `options` are its keyword arguments."""
        result: SubmissionResult = self._portal.call(
            lambda: self._intake.submit_body(public_form_key, body, content_type, **options)
        )
        return result
