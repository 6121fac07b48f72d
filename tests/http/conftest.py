"""The HTTP suite's harness: the real Starlette app, driven over HTTP, on a real store.

Every test that builds a service runs on SQLite, the embedded default: a real SQLite
file in the test's directory, and the in-process limiter. The tests marked
`postgres_smoke` run a second time on the production pair: a real PostgreSQL database
and the real RedisRateLimiter (marked `services`: skipped without the servers, or failed
under INTAKE_REQUIRE_SERVICES=1). The smoke set is what PostgreSQL does its own way: the
group commit, the key's claim, the relay's SKIP LOCKED claim, LISTEN/NOTIFY (the form
cache, the relay's wake-ups), quota and usage shards, search, concurrent triage, the
limits in Redis, and a schema migrated from empty (tests/README.md lists the modules).
Every store, the in-memory one included, is held to one behaviour by the contract suite
(tests/contract), which is why the HTTP tests need not run on each. A module may pick
its own backends with a `backend` fixture of its own (`BACKENDS` names them).

The clock is a FakeClock on every backend (the stores and the limiters take their times from
it, so tests move time without sleeping) and ids come from a SeededIdSource. What a test
reads back goes through the Store ports, so the same assertions hold for every backend.

PostgreSQL: the session creates a database of its own on INTAKE_TEST_DATABASE_URL's server
and migrates it once; each service starts from emptied tables (DELETE, as the contract
suite does). Redis (the `redis_url` fixture of tests/conftest.py): each service's limiter
has a key prefix of its own, whose keys are deleted when the service stops.

Every answer the suite receives goes through `SpecCheck` (spec_check.py): it must carry
an X-Request-ID, and an answer of a documented operation must have a documented status,
the documented headers and a body that validates against the schema /openapi.json gives
for it.
"""

from __future__ import annotations

import functools
import itertools
import json
import secrets
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
)
from contextlib import AbstractAsyncContextManager, ExitStack, asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ParamSpec, Protocol, TypeVar

import anyio
import httpx2
import psycopg
import pytest
from psycopg import sql
from redis.asyncio import Redis
from starlette.applications import Starlette
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from intake.adapters.blobs.memory import InMemoryBlobStore
from intake.adapters.memory import FakeChallengeVerifier, FakeClock, InMemoryStore, SeededIdSource
from intake.adapters.postgres import open_postgres_store
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.ratelimit_redis import RedisRateLimiter
from intake.adapters.sqlite import open_sqlite_store
from intake.config import Settings
from intake.containers import opened
from intake.domain.errors import StorageUnavailable
from intake.domain.idempotency import IdempotencyRecord
from intake.domain.listing import ALL, SubmissionFilter, SubmissionPage, SubmissionQuery
from intake.domain.model import Form, OutboxEvent, Submission, SubmissionStatus, Workspace
from intake.domain.spam.model import Lesson
from intake.entrypoints.http.app import serving_app
from intake.ports.activity import ActivityRepository
from intake.ports.api_keys import ApiKeyRepository
from intake.ports.blobs import BlobStore
from intake.ports.challenge import ChallengeVerifier
from intake.ports.deliveries import DeliveryRepository
from intake.ports.destinations import DestinationRepository
from intake.ports.forms import FormRepository
from intake.ports.new_events import NewEvents
from intake.ports.notes import NoteRepository
from intake.ports.rate_limiter import RateLimiter
from intake.ports.sealed_values import SealedValueRepository
from intake.ports.secrets import SecretRepository
from intake.ports.spam_statistics import SpamStatisticsRepository
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.ports.submissions import (
    PURGE_BATCH_SIZE,
    CommitPlan,
    CommitResult,
    ErasedBatch,
    HoneypotHit,
    HoneypotResult,
    OutboxRow,
    PurgeCounts,
    SubmissionRepository,
    TruncatedBatch,
)
from intake.ports.triage import Erased, Erasure, Release, Released
from intake.ports.users import UserRepository
from intake.ports.workspaces import WorkspaceRepository
from intake.serve_runtime import ServeContainer
from intake.service.admin import CreatedKey, FormChanges, owner_services
from tests.conftest import unavailable
from tests.contract.conftest import (
    admin_url,
    copy_database,
    create_database,
    database_url,
    drop_database,
    empty_tables,
    sqlite_template,  # noqa: F401 - a fixture the SQLite backend asks for
    without_syncs,
)
from tests.http.spec_check import SpecCheck

P = ParamSpec("P")
T = TypeVar("T")

PEER = "203.0.113.5"
PEER_HEADER = "x-test-peer"
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

ERROR_KEYS = {"ok", "error", "request_id"}


class PeerFromHeader:
    """Test-only ASGI wrapper: `X-Test-Peer: 198.51.100.7` makes that the socket peer of
    the request, as if it came from another host. The header is removed before the app
    sees it, so it cannot be mistaken for anything the service reads."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            peer = [v for k, v in headers if k == PEER_HEADER.encode()]
            if peer:
                scope = {
                    **scope,
                    "client": (peer[-1].decode("latin-1"), 40_000),
                    "headers": [(k, v) for k, v in headers if k != PEER_HEADER.encode()],
                }
        await self.app(scope, receive, send)


# -- the store the app is given --------------------------------------------------------


class FailingCommits:
    """A SubmissionRepository that delegates every call to another, except that its next
    `failures` commits raise StorageUnavailable without reaching it: a commit the database
    refused, on any backend. Nothing of such a commit is written."""

    def __init__(self, inner: SubmissionRepository) -> None:
        self.inner = inner
        self.failures = 0

    async def commit(self, plan: CommitPlan) -> CommitResult:
        if self.failures:
            self.failures -= 1
            raise StorageUnavailable("injected failure")
        return await self.inner.commit(plan)

    async def record_honeypot(self, hit: HoneypotHit) -> HoneypotResult:
        return await self.inner.record_honeypot(hit)

    async def honeypot_hits(self, form_id: str) -> dict[str, int]:
        return await self.inner.honeypot_hits(form_id)

    async def claim_key(self, record: IdempotencyRecord) -> IdempotencyRecord | None:
        return await self.inner.claim_key(record)

    async def find_idempotency(
        self, scope: str, key: str, not_before: datetime
    ) -> IdempotencyRecord | None:
        return await self.inner.find_idempotency(scope, key, not_before)

    async def get(self, submission_id: str) -> Submission | None:
        return await self.inner.get(submission_id)

    async def existing(self, submission_ids: Collection[str]) -> set[str]:
        return await self.inner.existing(submission_ids)

    def iterate(
        self, form_id: str, chosen: SubmissionFilter = ALL, *, batch_size: int = 500
    ) -> AsyncIterator[Submission]:
        return self.inner.iterate(form_id, chosen, batch_size=batch_size)

    async def page(self, query: SubmissionQuery) -> SubmissionPage:
        return await self.inner.page(query)

    async def status_counts(
        self, form_id: str, chosen: SubmissionFilter, limit: int
    ) -> dict[SubmissionStatus, int]:
        return await self.inner.status_counts(form_id, chosen, limit)

    async def outbox(self, limit: int = 100) -> list[OutboxRow]:
        return await self.inner.outbox(limit)

    async def purge(
        self,
        now: datetime,
        outbox_retention: timedelta,
        *,
        batch_size: int = PURGE_BATCH_SIZE,
    ) -> PurgeCounts:
        return await self.inner.purge(now, outbox_retention, batch_size=batch_size)

    async def erase_flagged(self, created_before: datetime, limit: int) -> ErasedBatch:
        return await self.inner.erase_flagged(created_before, limit)

    async def erase_forwarded(self, limit: int) -> ErasedBatch:
        return await self.inner.erase_forwarded(limit)

    async def erase_expired(
        self, form_id: str, created_before: datetime, limit: int
    ) -> ErasedBatch:
        return await self.inner.erase_expired(form_id, created_before, limit)

    async def truncate_client_ips(self, created_before: datetime, limit: int) -> TruncatedBatch:
        return await self.inner.truncate_client_ips(created_before, limit)

    async def with_address(self, workspace_id: str, spellings: Collection[str]) -> list[Submission]:
        return await self.inner.with_address(workspace_id, spellings)

    async def forget_autoresponses(self, workspace_id: str, address: str) -> int:
        return await self.inner.forget_autoresponses(workspace_id, address)

    async def release(self, release: Release) -> Released | None:
        return await self.inner.release(release)

    async def mark_spam(
        self,
        submission_id: str,
        lesson: Lesson | None = None,
        *,
        report: OutboxEvent | None = None,
    ) -> Submission | None:
        return await self.inner.mark_spam(submission_id, lesson, report=report)

    async def erase(self, erasure: Erasure) -> Erased | None:
        return await self.inner.erase(erasure)


class HarnessStore:
    """The store the app is given: the backend's own, with commits a test can make fail
    and repositories a test can replace (`svc.store.forms = Exploding(svc.store.forms)`)."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.workspaces: WorkspaceRepository = inner.workspaces
        self.forms: FormRepository = inner.forms
        self.api_keys: ApiKeyRepository = inner.api_keys
        self.submissions = FailingCommits(inner.submissions)
        self.destinations: DestinationRepository = inner.destinations
        self.deliveries: DeliveryRepository = inner.deliveries
        self.secrets: SecretRepository = inner.secrets
        self.sealed: SealedValueRepository = inner.sealed
        self.users: UserRepository = inner.users
        self.notes: NoteRepository = inner.notes
        self.new_events: NewEvents = inner.new_events
        self.activity: ActivityRepository = inner.activity
        self.spam: SpamStatisticsRepository = inner.spam

    async def migrate(self) -> list[str]:
        return await self.inner.migrate()

    async def ping(self) -> None:
        await self.inner.ping()

    async def close(self) -> None:
        await self.inner.close()


# -- backends ---------------------------------------------------------------------------

Opened = tuple[Store, RateLimiter]


class Backend(Protocol):
    def open(self) -> AbstractAsyncContextManager[Opened]:
        """A fresh, empty store and a limiter with no hits, closed on exit. Entered on the
        event loop that serves the app."""
        ...


class MemoryBackend:
    @asynccontextmanager
    async def open(self) -> AsyncIterator[Opened]:
        store = InMemoryStore()
        try:
            yield store, InProcessRateLimiter()
        finally:
            await store.close()


class SqliteBackend:
    def __init__(self, template: Path, directory: Path) -> None:
        self._template = template
        self._directory = directory
        self._numbers = itertools.count()

    @asynccontextmanager
    async def open(self) -> AsyncIterator[Opened]:
        # A file per service, each a copy of the session's migrated empty database: it
        # starts empty, as a fake does, without the cost of migrating it each time, and
        # its commits are not synced to disk (`without_syncs`).
        path = self._directory / f"intake-{next(self._numbers)}.db"
        copy_database(self._template, path)
        store = await without_syncs(await open_sqlite_store(f"sqlite:///{path}"))
        try:
            yield store, InProcessRateLimiter()
        finally:
            await store.close()


# What a request of the postgres backend may wait for: a pooled connection (the service's
# default is 2 s) and Redis. A machine running the suite on every core can take longer
# than a couple of seconds to schedule a connect or an answer, and a test must not fail
# on a 503 that only the load caused.
POOL_TIMEOUT = 30.0
REDIS_TIMEOUT = 30.0


class PostgresBackend:
    """The production pair: the PostgreSQL store on the session's database and the Redis
    limiter under a key prefix of its own. The database is shared, so a test runs one
    service on it at a time: opening one empties the tables."""

    def __init__(self, url: str, redis_url: str) -> None:
        self._url = url
        self._redis_url = redis_url

    @asynccontextmanager
    async def open(self) -> AsyncIterator[Opened]:
        store = await open_postgres_store(
            self._url, min_size=1, max_size=4, pool_timeout=POOL_TIMEOUT
        )
        try:
            await empty_tables(store)
            client = Redis.from_url(
                self._redis_url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
            )
            prefix = f"intake-http:{secrets.token_hex(8)}:"
            try:
                yield store, RedisRateLimiter(client, prefix)
            finally:
                try:
                    keys = [key async for key in client.scan_iter(match=prefix + "*")]
                    if keys:
                        await client.delete(*keys)
                finally:
                    await client.aclose()
        finally:
            await store.close()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A database of the session's own, created and migrated once, dropped at the end;
    else skip (or fail) when the server does not answer."""
    admin = admin_url()
    try:
        name = create_database(admin)
    except psycopg.OperationalError as error:
        unavailable(f"PostgreSQL is not reachable: {error}")
    try:
        url = database_url(admin, name)
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            # A commit need not wait for its WAL to reach the disk: what a crash of the
            # server could lose no test needs, and commit-heavy tests run about a tenth
            # faster. Nothing else the adapter sees changes.
            conn.execute(
                sql.SQL("ALTER DATABASE {} SET synchronous_commit = off").format(
                    sql.Identifier(name)
                )
            )
        anyio.run(_migrate, url)
        yield url
    finally:
        drop_database(admin, name)


async def _migrate(url: str) -> None:
    store = await open_postgres_store(url)
    try:
        await store.migrate()
    finally:
        await store.close()


async def empty_postgres(url: str) -> None:
    """Every table of the database at `url` emptied."""
    store = await open_postgres_store(url, min_size=1, max_size=1)
    try:
        await empty_tables(store)
    finally:
        await store.close()


BACKENDS: dict[str, Callable[[pytest.FixtureRequest], Backend]] = {
    "memory": lambda request: MemoryBackend(),
    "sqlite": lambda request: SqliteBackend(
        request.getfixturevalue("sqlite_template"), request.getfixturevalue("tmp_path")
    ),
    # The database and the Redis check are made only when a PostgreSQL test runs.
    "postgres": lambda request: PostgresBackend(
        request.getfixturevalue("postgres_url"), request.getfixturevalue("redis_url")
    ),
}
_SERVICES = {"postgres"}


def _marks_of(name: str) -> list[pytest.MarkDecorator]:
    return [pytest.mark.services] if name in _SERVICES else []


# The one backend every test of the suite runs on: SQLite, the embedded default, a real SQL
# store and the one a first run of intake uses. The contract suite (tests/contract) holds
# every store (and the in-memory pipeline, on its ports) to the same behaviour, so running
# each HTTP test on every store again would test the stores, not the app, three times.
HTTP_BACKEND = "sqlite"
# What PostgreSQL does its own way, and what only the PostgreSQL backend runs (Redis, in
# the production pair), is run there too by the tests marked `postgres_smoke`.
POSTGRES_SMOKE = "postgres_smoke"


def _backends_of(item: pytest.Function) -> list[object]:
    names = [HTTP_BACKEND]
    if item.get_closest_marker(POSTGRES_SMOKE) is not None:
        names.append("postgres")
    return [pytest.param(name, id=name, marks=_marks_of(name)) for name in names]


def _chooses_its_backends(metafunc: pytest.Metafunc) -> bool:
    """A module with a `backend` fixture of its own, or a test that parametrizes it."""
    named = any(
        "backend" in str(mark.args[0]) for mark in metafunc.definition.iter_markers("parametrize")
    )
    return named or hasattr(metafunc.module, "backend")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames or _chooses_its_backends(metafunc):
        return
    metafunc.parametrize("backend", _backends_of(metafunc.definition), indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Backend:
    """The test's backend: SQLite, and PostgreSQL too for the smoke set."""
    return BACKENDS[request.param](request)


class OnBackend:
    """Test-only ASGI wrapper that builds the app inside its lifespan, on the test client's
    event loop: the backend's store and limiter are opened there first (a connection pool
    belongs to the loop that opened it), and closed once the app has shut down, before the
    client hears that it has."""

    def __init__(self, backend: Backend, settings: Settings, **overrides: Any) -> None:
        self._backend = backend
        self._settings = settings
        self._overrides = overrides
        self._app: Starlette | None = None
        self._store: HarnessStore | None = None

    @property
    def app(self) -> Starlette:
        assert self._app is not None, "the app is built when the test client starts"
        return self._app

    @property
    def store(self) -> HarnessStore:
        assert self._store is not None, "the store is opened when the test client starts"
        return self._store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        held: list[Message] = []

        async def hold_completion(message: Message) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                held.append(message)
            else:
                await send(message)

        async with self._backend.open() as (store, limiter):
            self._store = HarnessStore(store)
            # The contract against the fakes: the serving container as `intake serve`
            # composes it, each port the test drives overriding its provider.
            container = ServeContainer(settings=self._settings, opening=StoreOpening.SERVE)
            container.store.override(self._store)
            container.rate_limiter.override(limiter)
            container.override_providers(
                **{name: port for name, port in self._overrides.items() if port is not None}
            )
            self._app = serving_app(self._settings, lambda: opened(container, container.runtime))
            await self._app(scope, receive, hold_completion)
        for message in held:
            await send(message)


# -- the service under test -------------------------------------------------------------


class Service:
    """One running app on a backend, a client for it, and the admin that seeds it."""

    def __init__(
        self,
        *,
        app: ASGIApp,
        client: TestClient,
        store: HarnessStore,
        clock: FakeClock,
        ids: SeededIdSource,
        challenge: ChallengeVerifier,
        spec: SpecCheck,
        blobs: BlobStore,
    ) -> None:
        self.blobs = blobs
        self.spec = spec
        self.app = app
        self.client = client
        self.store = store
        self.clock = clock
        self.ids = ids
        self.challenge = challenge
        self.services = owner_services(store, clock, ids, blobs=blobs)

    def run(self, fn: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
        """Runs an async call on the app's own event loop."""
        portal = self.client.portal
        assert portal is not None
        return portal.call(functools.partial(fn, *args, **kwargs))

    # Seeding

    def workspace(self, **options: Any) -> Workspace:
        return self.run(self.services.workspaces.create, options.pop("name", "Acme"), **options)

    def form(self, workspace_id: str, **options: Any) -> Form:
        return self.run(self.services.forms.create, workspace_id, **options)

    def api_key(self, workspace_id: str) -> CreatedKey:
        return self.run(self.services.keys.create, workspace_id)

    def update_form(self, form_id: str, **changes: Any) -> Form:
        return self.run(self.services.forms.update, form_id, FormChanges(**changes))

    # Calls

    def public(
        self,
        key: str,
        *,
        peer: str | None = None,
        origin: str | None = None,
        idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx2.Response:
        return self.client.post(
            f"/f/{key}",
            headers=_headers(headers, peer=peer, origin=origin, idempotency_key=idempotency_key),
            **kwargs,
        )

    def server(
        self,
        form_id: str,
        api_key: str | None,
        *,
        peer: str | None = None,
        idempotency_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx2.Response:
        extra = dict(headers or {})
        if api_key is not None:
            extra.setdefault("authorization", f"Bearer {api_key}")
        return self.client.post(
            f"/v1/forms/{form_id}/submissions",
            headers=_headers(extra, peer=peer, idempotency_key=idempotency_key),
            **kwargs,
        )

    def raw(
        self,
        path: str,
        headers: Iterable[tuple[str, str]],
        chunks: Iterator[bytes],
        *,
        stall: bool = False,
    ) -> RawExchange:
        """Drives the ASGI app directly with a body fed chunk by chunk, counting how many
        bytes the app pulled: what a streamed upload looks like from the server side.
        With `stall`, the sender goes quiet after the last chunk instead of ending."""
        portal = self.client.portal
        assert portal is not None
        return portal.call(_exchange, self.app, path, list(headers), chunks, stall)

    # What is stored

    def submissions(self, form_id: str) -> list[Submission]:
        async def collect() -> list[Submission]:
            return [s async for s in self.services.exports.submissions(form_id)]

        return self.run(collect)

    def submission(self, submission_id: str) -> Submission:
        found = self.run(self.store.submissions.get, submission_id)
        assert found is not None, f"{submission_id} is not stored"
        return found

    def outbox(self, submission_id: str) -> list[OutboxRow]:
        return [row for row in self._outbox() if row.event.submission_id == submission_id]

    def used(self, workspace_id: str) -> int:
        return self.run(self.services.workspaces.usage, workspace_id).used

    def stored(self) -> tuple[int, int]:
        """(submissions, outbox rows): what a refusal must leave as it found."""

        async def count() -> int:
            total = 0
            for form in await self.store.forms.list():
                total += len([s async for s in self.store.submissions.iterate(form.form_id)])
            return total

        return self.run(count), len(self._outbox())

    def fail_commits(self, count: int = 1) -> None:
        """The next `count` commits fail as a database that cannot write does."""
        self.store.submissions.failures = count

    def _outbox(self) -> list[OutboxRow]:
        rows = self.run(self.store.submissions.outbox, _EVERY_ROW)
        assert len(rows) < _EVERY_ROW
        return rows


_EVERY_ROW = 100_000  # more than any test stores


def _headers(
    headers: Mapping[str, str] | None,
    *,
    peer: str | None = None,
    origin: str | None = None,
    idempotency_key: str | None = None,
) -> dict[str, str]:
    merged = dict(headers or {})
    if peer is not None:
        merged[PEER_HEADER] = peer
    if origin is not None:
        merged["origin"] = origin
    if idempotency_key is not None:
        merged["idempotency-key"] = idempotency_key
    return merged


class RawExchange:
    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""
        self.pulled = 0  # body bytes the app asked for

    def json(self) -> Any:
        return json.loads(self.body)


async def _exchange(
    app: ASGIApp,
    path: str,
    headers: list[tuple[str, str]],
    chunks: Iterator[bytes],
    stall: bool,
) -> RawExchange:
    exchange = RawExchange()
    ended = False

    async def receive() -> Message:
        nonlocal ended
        if ended:
            return {"type": "http.disconnect"}
        chunk = next(chunks, None)
        if chunk is None and stall:
            await anyio.sleep_forever()
        if chunk is None:
            ended = True
            return {"type": "http.request", "body": b"", "more_body": False}
        exchange.pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            exchange.status = message["status"]
            exchange.headers = {
                k.decode("latin-1"): v.decode("latin-1") for k, v in message["headers"]
            }
        elif message["type"] == "http.response.body":
            exchange.body += message.get("body", b"")

    scope: Scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        "client": (PEER, 1234),
        "server": ("testserver", 80),
    }
    await app(scope, receive, send)
    return exchange


ServiceFactory = Callable[..., Service]


def start_service(
    stack: ExitStack,
    backend: Backend,
    settings: Settings | None = None,
    *,
    challenge: ChallengeVerifier | None = None,
    real_challenge: bool = False,
    blobs: BlobStore | None = None,
) -> Service:
    """A running service on `backend`, stopped as `stack` closes; `settings` and
    `challenge` replace the defaults, and `challenge=None` with `real_challenge=True`
    keeps the container's own verifier."""
    clock, ids = FakeClock(), SeededIdSource()
    verifier = None if real_challenge else (challenge or FakeChallengeVerifier())
    # Uploads go to memory unless a test brings its own store: never to the
    # default directory beside the working directory's database.
    blobs = blobs or InMemoryBlobStore(clock=clock)
    app = OnBackend(
        backend,
        settings or Settings(),
        clock=clock,
        id_source=ids,
        challenge=verifier,
        blobs=blobs,
    )
    client = TestClient(PeerFromHeader(app), client=(PEER, 1234), follow_redirects=False)
    stack.enter_context(client)
    check = SpecCheck.of(client.get("/openapi.json"))

    def hook(response: httpx2.Response) -> None:
        response.read()
        check.check(response)

    client.event_hooks = {"request": [], "response": [hook]}
    runtime = app.app.state.runtime
    return Service(
        app=app.app,
        client=client,
        store=app.store,
        clock=clock,
        ids=ids,
        challenge=verifier or runtime.challenge,
        spec=check,
        blobs=blobs,
    )


@pytest.fixture
def make_service(backend: Backend) -> Iterator[ServiceFactory]:
    """Builds running services on the test's backend (`start_service`)."""
    with ExitStack() as stack:
        yield functools.partial(start_service, stack, backend)


@pytest.fixture(scope="module")
def module_service(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    """One service for a module's tests that only read: what a module fixture seeds in it
    once, each such test would otherwise build and seed again, on a service of its own.
    On SQLite, the suite's backend (HTTP_BACKEND). A test that changes what the service
    holds keeps a service of its own (`svc`)."""
    template = request.getfixturevalue("sqlite_template")
    backend = SqliteBackend(template, tmp_path_factory.mktemp("module-service"))
    with ExitStack() as stack:
        yield start_service(stack, backend)


class Seeded:
    """A service with one free workspace, a public form and an API key in it."""

    def __init__(self, service: Service) -> None:
        self.svc = service
        self.workspace = service.workspace()
        self.form = service.form(self.workspace.workspace_id, name="Contact")
        self.key = service.api_key(self.workspace.workspace_id)

    @property
    def fake_challenge(self) -> FakeChallengeVerifier:
        assert isinstance(self.svc.challenge, FakeChallengeVerifier)
        return self.svc.challenge


@pytest.fixture
def svc(make_service: ServiceFactory) -> Service:
    return make_service()


@pytest.fixture
def seeded(svc: Service) -> Seeded:
    return Seeded(svc)


# Part 7 of the interface specification, copied from it verbatim: the suite checks the
# service against the text, not against the service's own table.
SPEC_ERRORS: Mapping[str, tuple[int, str]] = {
    "malformed_request": (400, "We could not read that request."),
    "unsupported_content_type": (415, "That content type is not supported."),
    "payload_too_large": (413, "That submission is too large."),
    "validation_failed": (422, "Please check the highlighted fields."),
    "unauthorized": (401, "This endpoint requires a valid API key."),
    "origin_not_allowed": (403, "This form does not accept submissions from that address."),
    "form_disabled": (403, "This form is not currently accepting submissions."),
    "form_not_found": (404, "This form does not exist."),
    "challenge_failed": (403, "We could not verify that submission. Please try again."),
    "rate_limited": (429, "Too many submissions. Please wait a moment and try again."),
    "quota_exceeded": (429, "This form has reached its submission limit."),
    "idempotency_conflict": (
        409,
        "That idempotency key was already used with a different submission.",
    ),
    "service_unavailable": (503, "We could not accept that submission. Please try again."),
}
# The management API's two codes of its own, copied from management-api.md.
MANAGEMENT_ERRORS: Mapping[str, tuple[int, str]] = {
    "forbidden": (403, "This key cannot do that."),
    "not_found": (404, "Not found."),
}


# The management API answers requests, not submissions: the table's codes and statuses,
# and for these its own words (docs/api.md, "Errors").
MANAGEMENT_WORDS: Mapping[str, tuple[int, str]] = {
    "payload_too_large": (413, "That request is too large."),
    "rate_limited": (429, "Too many requests. Please wait a moment and try again."),
    "service_unavailable": (503, "We could not answer that request. Please try again."),
}


def assert_management_error(response: httpx2.Response, code: str) -> dict[str, Any]:
    """`assert_error` for an answer of the management API, in its own words where it has
    them."""
    return assert_error(response, code, words=MANAGEMENT_WORDS)


def assert_error(
    response: httpx2.Response, code: str, *, words: Mapping[str, tuple[int, str]] | None = None
) -> dict[str, Any]:
    """The spec's envelope, exactly: the code's status, ok false, the code and its public
    message (or the route's own `words` for it), the request id of the X-Request-ID
    header, `fields` only on validation_failed."""
    status, message = (words or {}).get(code) or SPEC_ERRORS[code]
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert set(body) == ERROR_KEYS, body
    assert body["ok"] is False
    assert body["request_id"] == response.headers["x-request-id"]
    error = body["error"]
    assert error["code"] == code
    assert error["message"] == message
    if code == "validation_failed":
        assert set(error) == {"code", "message", "fields"}
        assert isinstance(error["fields"], dict)
        assert error["fields"]
    else:
        assert set(error) == {"code", "message"}
    return body


# A download link is no submission: its refusals keep the table's codes and statuses,
# with messages about the link and the file (docs/uploads.md).
LINK_MESSAGES = {
    "unauthorized": "This download link is invalid or has expired.",
    "form_not_found": "This file does not exist or is no longer available.",
    "service_unavailable": "We could not fetch that file. Please try again.",
}


def assert_link_refused(response: httpx2.Response, code: str) -> dict[str, Any]:
    """The spec's envelope and the code's status, with the route's own message."""
    body = assert_error_shape(response, code)
    assert body["error"]["message"] == LINK_MESSAGES[code]
    return body


def assert_error_shape(response: httpx2.Response, code: str) -> dict[str, Any]:
    """The spec's envelope and the code's status, whatever the message: for the routes
    that word a code in their own way (downloads, /metrics, /readyz)."""
    assert response.status_code == SPEC_ERRORS[code][0], response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert set(body) == {"ok", "error", "request_id"}, body
    assert body["ok"] is False
    assert body["request_id"] == response.headers["x-request-id"]
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code
    return body
