"""The production deployment scaled out: two `intake serve` processes (one of them with
two workers) on one PostgreSQL database and one Redis, driven over real sockets. The
limits of decisions.md must hold across all of them: exact rate-limit windows, one
commit per Idempotency-Key, and exactly min(N, R) submissions against a quota.

The module makes a PostgreSQL database of its own (on INTAKE_TEST_DATABASE_URL's server,
dropped at the end) and uses the test Redis (tests/conftest.py); its windows are those
of forms it made. The servers trust 127.0.0.1 as a proxy, so each request chooses its
client IP with X-Forwarded-For.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
from psycopg import sql

from tests.conftest import unavailable
from tests.support.processes import ServedProcess, clean_env, run_cli, wait_until_ready

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.services]

DEFAULT_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
STARTUP_DEADLINE = 60.0  # seconds for both servers to answer /readyz
SHUTDOWN_DEADLINE = 10.0
HTTP_TIMEOUT = 15.0
LOG_TAIL = 40  # lines of a server's log attached to a failure

# What the servers are configured with (the defaults, but the two lowered for the test).
PUBLIC_BURST = 5  # per 30 s, per client IP and form: the default
PUBLIC_FORM = 20  # per 600 s, per form
SERVER_BURST = 8  # per 30 s, per API key and form


def _admin_url() -> str:
    return os.environ.get("INTAKE_TEST_DATABASE_URL") or DEFAULT_ADMIN_URL


def _where(url: str) -> str:
    # Host and port only: the URL may carry a password.
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or ''}"


def _with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def _create_database(admin: str) -> str:
    name = f"intake_scale_{secrets.token_hex(6)}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(
                sql.Identifier(name)
            )
        )
    return name


def _drop_database(admin: str, name: str) -> None:
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def _check_postgres(admin: str) -> None:
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as error:
        unavailable(f"PostgreSQL is not reachable at {_where(admin)}: {error}")


class Deployment:
    """The two servers and the command line that manages their database."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)
        self.servers: list[ServedProcess] = []

    def intake(self, *argv: str) -> dict[str, Any]:
        return run_cli(self.env, *argv)

    def logs(self) -> str:
        """For assertion messages: what the servers said."""
        return "\n".join(server.describe() for server in self.servers)

    def base(self, index: int) -> str:
        """Requests alternate between the servers."""
        return self.servers[index % len(self.servers)].base

    def new_form(self, *workspace_args: str) -> dict[str, Any]:
        workspace = self.intake("workspace", "create", "--name", "Scale", *workspace_args)
        return self.intake("form", "create", "--workspace", workspace["workspace_id"])

    def stored(self, form_id: str) -> list[dict[str, Any]]:
        submissions: list[dict[str, Any]] = self.intake("submissions", "list", "--form", form_id)[
            "submissions"
        ]
        return submissions


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Deployment]:
    admin = _admin_url()
    _check_postgres(admin)
    logs = tmp_path_factory.mktemp("scale_out")
    stopped: dict[str, int | None] = {}  # exit status by server
    with ExitStack() as cleanup:
        name = _create_database(admin)
        cleanup.callback(_drop_database, admin, name)
        env = clean_env(
            INTAKE_DATABASE_URL=_with_database(admin, name),
            INTAKE_REDIS_URL=redis_url,
            INTAKE_TRUSTED_PROXIES="127.0.0.1",
            INTAKE_RATE_LIMIT_PUBLIC_BURST=f"{PUBLIC_BURST}/30",
            INTAKE_RATE_LIMIT_PUBLIC_FORM=f"{PUBLIC_FORM}/600",
            INTAKE_RATE_LIMIT_SERVER_BURST=f"{SERVER_BURST}/30",
        )
        deployment = Deployment(env)
        deployment.intake("migrate")

        def stop_all() -> None:
            # Registered before the first start: a failed setup stops what did start.
            for server in deployment.servers:
                stopped[str(server)] = server.stop()

        cleanup.callback(stop_all)
        for index, workers in enumerate((2, 1)):
            server = ServedProcess(
                env, logs / f"serve-{index}.log", workers=workers, ready_path="/readyz",
                startup_timeout=STARTUP_DEADLINE, stop_timeout=SHUTDOWN_DEADLINE,
                log_tail=LOG_TAIL,
            )  # fmt: skip
            deployment.servers.append(server)
            server.start(wait=False)  # both start at once; then both are waited for
        wait_until_ready(deployment.servers)
        yield deployment
    # Reached only when setup and teardown went through: the servers' exit is checked
    # after the database is dropped. uvicorn's single process re-raises
    # the SIGTERM it handled, once shut down; its supervisor of several exits with 0.
    unclean = {where: code for where, code in stopped.items() if code not in (0, -signal.SIGTERM)}
    assert not unclean, f"servers did not stop cleanly: {unclean}\n{deployment.logs()}"


def _ip(index: int) -> str:
    """Distinct client addresses, from a documentation range (TEST-NET-2)."""
    assert 0 <= index < 254
    return f"198.51.100.{1 + index}"


def _one_client(index: int) -> str:
    """Distinct addresses of one client: its /64, where a public Idempotency-Key lives."""
    return f"2001:db8:5ca1:e::{1 + index:x}"


def _payload(index: int) -> dict[str, str]:
    return {"email": f"person{index}@example.com", "message": f"Hello number {index}"}


async def _post_all(
    deployment: Deployment, requests: Sequence[tuple[str, Mapping[str, str], object]]
) -> list[httpx.Response]:
    """Every (url, headers, JSON body) at once, each on a connection of its own."""
    limits = httpx.Limits(max_connections=len(requests), max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT, limits=limits) as client:
        answers = await asyncio.gather(
            *(
                client.post(url, headers=dict(headers), json=body)
                for url, headers, body in requests
            ),
            return_exceptions=True,
        )
    responses: list[httpx.Response] = []
    for (url, _, _), answer in zip(requests, answers, strict=True):
        if isinstance(answer, httpx.TransportError):
            pytest.fail(f"POST {url}: {answer!r}\n{deployment.logs()}")
        if isinstance(answer, BaseException):
            raise answer
        responses.append(answer)
    return responses


def _code(response: httpx.Response) -> str | None:
    if response.status_code < 400:
        return None
    code: str = response.json()["error"]["code"]
    return code


def _summary(responses: Sequence[httpx.Response]) -> str:
    return ", ".join(
        f"{status} x{count}"
        for status, count in sorted(Counter(r.status_code for r in responses).items())
    )


def _report(what: str, **figures: int) -> None:
    """One line of figures for whoever reads the CI log (shown with -rA or -s)."""
    print(f"scale-out {what}: " + ", ".join(f"{name} {n}" for name, n in figures.items()))


def _check_rate_limited(response: httpx.Response, window: int, deployment: Deployment) -> None:
    assert _code(response) == "rate_limited", f"{response.text}\n{deployment.logs()}"
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= window


async def test_the_public_burst_limit_is_exact_across_both_servers(
    deployment: Deployment,
) -> None:
    form = deployment.new_form()
    url = "{}/f/" + form["public_form_key"]
    sent = 12

    responses = await _post_all(
        deployment,
        [(url.format(deployment.base(i)), {"X-Forwarded-For": _ip(0)}, _payload(i))
         for i in range(sent)]
    )  # fmt: skip

    admitted = [r for r in responses if r.status_code == 201]
    refused = [r for r in responses if r.status_code == 429]
    _report("public burst", sent=sent, admitted=len(admitted), refused=len(refused))
    assert (len(admitted), len(refused)) == (PUBLIC_BURST, sent - PUBLIC_BURST), (
        f"{_summary(responses)}\n{deployment.logs()}"
    )
    for response in refused:
        _check_rate_limited(response, 30, deployment)
    # Another client of the same form is not held back, on either server.
    others = await _post_all(
        deployment,
        [(url.format(deployment.base(i)), {"X-Forwarded-For": _ip(1)}, _payload(i))
         for i in range(2)]
    )  # fmt: skip
    assert [r.status_code for r in others] == [201, 201], _summary(others)


async def test_the_per_form_ceiling_holds_across_both_servers(deployment: Deployment) -> None:
    form = deployment.new_form()
    url = "{}/f/" + form["public_form_key"]
    sent = 30

    responses = await _post_all(
        deployment,
        [(url.format(deployment.base(i)), {"X-Forwarded-For": _ip(i)}, _payload(i))
         for i in range(sent)]
    )  # fmt: skip

    admitted = [r for r in responses if r.status_code == 201]
    refused = [r for r in responses if r.status_code == 429]
    _report("per-form ceiling", sent=sent, admitted=len(admitted), refused=len(refused))
    assert (len(admitted), len(refused)) == (PUBLIC_FORM, sent - PUBLIC_FORM), (
        f"{_summary(responses)}\n{deployment.logs()}"
    )
    for response in refused:
        _check_rate_limited(response, 600, deployment)


async def test_the_server_endpoint_limit_per_api_key_holds_across_both_servers(
    deployment: Deployment,
) -> None:
    form = deployment.new_form()
    key = deployment.intake("key", "create", "--workspace", form["workspace_id"])
    url = "{}/v1/forms/" + form["form_id"] + "/submissions"
    auth = {"Authorization": f"Bearer {key['api_key']}"}
    sent = 12

    responses = await _post_all(
        deployment, [(url.format(deployment.base(i)), auth, _payload(i)) for i in range(sent)]
    )

    admitted = [r for r in responses if r.status_code == 201]
    refused = [r for r in responses if r.status_code == 429]
    _report("server burst", sent=sent, admitted=len(admitted), refused=len(refused))
    assert (len(admitted), len(refused)) == (SERVER_BURST, sent - SERVER_BURST), (
        f"{_summary(responses)}\n{deployment.logs()}"
    )
    for response in refused:
        _check_rate_limited(response, 30, deployment)


async def test_one_idempotency_key_sent_concurrently_commits_one_submission(
    deployment: Deployment,
) -> None:
    form = deployment.new_form()
    url = "{}/f/" + form["public_form_key"]
    sent = PUBLIC_BURST  # one client's burst: all are admitted to the key check
    payload = _payload(0)

    responses = await _post_all(
        deployment,
        [(url.format(deployment.base(i)),
          {"X-Forwarded-For": _one_client(i), "Idempotency-Key": "order-1"}, payload)
         for i in range(sent)]
    )  # fmt: skip

    statuses = Counter(r.status_code for r in responses)
    _report("idempotency, same payload", sent=sent, created=statuses[201], replayed=statuses[200])
    assert statuses == {201: 1, 200: sent - 1}, f"{_summary(responses)}\n{deployment.logs()}"
    ids = {r.json()["submission_id"] for r in responses}
    assert len(ids) == 1
    assert all(
        r.headers.get("Idempotent-Replayed") == "true" for r in responses if r.status_code == 200
    )
    stored = deployment.stored(form["form_id"])
    assert [s["submission_id"] for s in stored] == list(ids)
    assert stored[0]["data"] == payload


async def test_one_idempotency_key_with_two_payloads_commits_one_and_refuses_the_other(
    deployment: Deployment,
) -> None:
    form = deployment.new_form()
    url = "{}/f/" + form["public_form_key"]
    sent = PUBLIC_BURST
    payloads = [_payload(0), _payload(1)]  # alternately, so each server gets both

    responses = await _post_all(
        deployment,
        [(url.format(deployment.base(i // 2)),
          {"X-Forwarded-For": _one_client(i), "Idempotency-Key": "order-2"}, payloads[i % 2])
         for i in range(sent)]
    )  # fmt: skip

    created = [i for i, r in enumerate(responses) if r.status_code == 201]
    statuses = Counter(r.status_code for r in responses)
    _report(
        "idempotency, two payloads",
        sent=sent, created=statuses[201], replayed=statuses[200], conflicts=statuses[409],
    )  # fmt: skip
    assert len(created) == 1, f"{_summary(responses)}\n{deployment.logs()}"
    winner = created[0] % 2
    submission_id = responses[created[0]].json()["submission_id"]
    for i, response in enumerate(responses):
        if i == created[0]:
            continue
        if i % 2 == winner:  # the same payload: the original answer, replayed
            assert response.status_code == 200, f"{i}: {response.text}"
            assert response.json()["submission_id"] == submission_id
            assert response.headers.get("Idempotent-Replayed") == "true"
        else:
            assert response.status_code == 409, f"{i}: {response.text}"
            assert _code(response) == "idempotency_conflict"
    stored = deployment.stored(form["form_id"])
    assert [s["submission_id"] for s in stored] == [submission_id]
    assert stored[0]["data"] == payloads[winner]


async def test_the_monthly_quota_admits_exactly_what_remains_across_both_servers(
    deployment: Deployment,
) -> None:
    quota = 6
    form = deployment.new_form("--plan", "free", "--monthly-limit", str(quota))
    url = "{}/f/" + form["public_form_key"]
    sent = 15

    responses = await _post_all(
        deployment,
        [(url.format(deployment.base(i)), {"X-Forwarded-For": _ip(i)}, _payload(i))
         for i in range(sent)]
    )  # fmt: skip

    admitted = [r for r in responses if r.status_code == 201]
    refused = [r for r in responses if r.status_code == 429]
    _report("monthly quota", sent=sent, admitted=len(admitted), refused=len(refused))
    assert (len(admitted), len(refused)) == (quota, sent - quota), (
        f"{_summary(responses)}\n{deployment.logs()}"
    )
    assert {_code(r) for r in refused} == {"quota_exceeded"}
    stored = deployment.stored(form["form_id"])
    assert sorted(s["submission_id"] for s in stored) == sorted(
        r.json()["submission_id"] for r in admitted
    )
    assert {s["status"] for s in stored} == {"accepted"}
