"""INTAKE_DATABASE_URL=postgresql://... and INTAKE_REDIS_URL=redis://... switch the
service to the production adapters: the app built from those settings alone, with no
port replaced, stores in PostgreSQL and limits in Redis.

The database is the HTTP suite's session database (migrated; emptied here first). The
limiter keeps the production key prefix, on the test Redis database; the keys of this
module's forms are deleted afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import anyio
import pytest
from redis import Redis
from starlette.applications import Starlette
from starlette.testclient import TestClient

from intake.adapters.postgres import PostgresStore
from intake.adapters.ratelimit_fallback import FallbackRateLimiter
from intake.adapters.ratelimit_redis import DEFAULT_PREFIX
from intake.config import Settings
from intake.domain.model import Form, SubmissionStatus
from intake.entrypoints.http import create_app
from intake.serve_runtime import ServeRuntime
from tests.http.conftest import assert_error, empty_postgres
from tests.support.processes import TEST_SECRET_KEY

pytestmark = pytest.mark.services

FIELDS = {"name": "Ada", "message": "Hello"}


class Production:
    """The app as `intake serve` builds it from its environment, and a client for it."""

    def __init__(self, app: Starlette, client: TestClient) -> None:
        self.app = app
        self.client = client
        self.forms: list[Form] = []

    @property
    def runtime(self) -> ServeRuntime:
        runtime: ServeRuntime = self.app.state.runtime
        return runtime

    def form(self) -> Form:
        """A public form in a new workspace, made through the runtime's own services."""
        portal = self.client.portal
        assert portal is not None
        services = self.runtime.services
        workspace = portal.call(services.workspaces.create, "Acme")
        form = portal.call(services.forms.create, workspace.workspace_id)
        self.forms.append(form)
        return form


@pytest.fixture
def workers(postgres_url: str, redis_url: str) -> Iterator[Callable[[], Production]]:
    """Starts apps as `intake serve` workers would: each from the same environment, with
    a runtime of its own. They stop, and the Redis keys of their forms go, at the end."""
    anyio.run(empty_postgres, postgres_url)
    settings = Settings.from_env(
        {
            "INTAKE_DATABASE_URL": postgres_url,
            "INTAKE_REDIS_URL": redis_url,
            "INTAKE_SECRET_KEY": TEST_SECRET_KEY,
        }
    )
    assert (settings.database_url, settings.redis_url) == (postgres_url, redis_url)
    started: list[Production] = []
    with ExitStack() as stack:
        stack.callback(lambda: _delete_windows(redis_url, [f for s in started for f in s.forms]))

        def start() -> Production:
            app = create_app(settings)  # no port replaced: the bootstrap chooses them all
            service = Production(app, TestClient(app, follow_redirects=False))
            stack.enter_context(service.client)
            started.append(service)
            return service

        yield start


@pytest.fixture
def production(workers: Callable[[], Production]) -> Production:
    return workers()


def _delete_windows(redis_url: str, forms: list[Form]) -> None:
    with Redis.from_url(redis_url, socket_timeout=10) as redis:
        for form in forms:
            # Every window key names its form in a hash tag: {frm_...}.
            keys = list(redis.scan_iter(match=f"{DEFAULT_PREFIX}*{{{form.form_id}}}*"))
            if keys:
                redis.delete(*keys)


def _windows(redis_url: str, form: Form) -> list[bytes]:
    with Redis.from_url(redis_url, socket_timeout=10) as redis:
        return list(redis.scan_iter(match=f"{DEFAULT_PREFIX}*{{{form.form_id}}}*"))


def test_the_settings_choose_postgresql_and_the_redis_backed_limiter(
    production: Production,
) -> None:
    runtime = production.runtime

    assert isinstance(runtime.store, PostgresStore)
    assert isinstance(runtime.rate_limiter, FallbackRateLimiter)
    assert not runtime.rate_limiter.degraded


def test_a_submission_is_stored_in_postgresql_and_counted_in_redis(
    production: Production, redis_url: str
) -> None:
    form = production.form()

    response = production.client.post(f"/f/{form.public_form_key}", data=FIELDS)

    assert response.status_code == 201, response.text
    portal = production.client.portal
    assert portal is not None
    stored = portal.call(production.runtime.store.submissions.get, response.json()["submission_id"])
    assert stored is not None
    assert stored.form_id == form.form_id
    assert stored.data == FIELDS
    assert stored.status is SubmissionStatus.ACCEPTED
    # The shared windows hold the hit: Redis answered, not the per-process fallback.
    assert _windows(redis_url, form)
    limiter = production.runtime.rate_limiter
    assert isinstance(limiter, FallbackRateLimiter)
    assert not limiter.degraded


def test_the_sixth_rapid_submission_from_one_ip_is_rate_limited(
    production: Production,
) -> None:
    form = production.form()

    admitted = [
        production.client.post(f"/f/{form.public_form_key}", data=FIELDS).status_code
        for _ in range(5)
    ]
    refused = production.client.post(f"/f/{form.public_form_key}", data=FIELDS)

    assert admitted == [201] * 5
    assert_error(refused, "rate_limited")
    assert 1 <= int(refused.headers["retry-after"]) <= 30
    limiter = production.runtime.rate_limiter
    assert isinstance(limiter, FallbackRateLimiter)
    assert not limiter.degraded


def test_the_workers_share_one_rate_limit(workers: Callable[[], Production]) -> None:
    first, second = workers(), workers()
    form = first.form()
    url = f"/f/{form.public_form_key}"

    admitted = [first.client.post(url, data=FIELDS).status_code for _ in range(3)]
    admitted += [second.client.post(url, data=FIELDS).status_code for _ in range(2)]
    refused = [worker.client.post(url, data=FIELDS) for worker in (first, second)]

    assert admitted == [201] * 5
    for response in refused:
        assert_error(response, "rate_limited")
