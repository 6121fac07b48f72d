"""Metrics and logs as an operator sees them: `intake serve` and `intake relay` as real
processes, scraped over sockets, with INTAKE_METRICS_TOKEN.

- without the token set, /metrics is an unknown path to everyone;
- one worker on SQLite: the counters move with a 201, a 400, a 429 and a 403; the outbox
  backlog rises with submissions and falls once `intake relay --once` delivers them to a
  real local webhook receiver; stderr holds one JSON line per request, none from
  uvicorn's access log, and neither a submission's contents nor the API key, at DEBUG;
- `intake relay --metrics-port`: the relay's own counters;
- two workers (on the test Redis, tests/conftest.py): a scrape
  answered by either worker counts the requests both of them served, and either worker
  refuses a request without the token, or with a wrong one, the same way.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import httpx
import pytest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from intake.config import Settings
from intake.domain.model import Form, Plan
from intake.entrypoints.cli import main
from intake.entrypoints.http.app import create_app
from intake.library_runtime import open_runtime
from tests.support.processes import (
    IntakeProcess,
    ServedProcess,
    clean_env,
    free_port,
    run_installed_cli,
    wait_for,
)
from tests.support.receiver import Receiver

pytestmark = pytest.mark.slow

DEADLINE = 60.0  # seconds for anything a process is waited for
PUBLIC = "/f/{public_form_key}"
SERVER = "/v1/forms/{form_id}/submissions"
MARKER = "private-words-5e0c"
TOKEN = "metrics-token-9d2e4f6a8b0c1d3e5f7a"
OPERATOR = {"authorization": f"Bearer {TOKEN}"}

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _parse(text: str) -> Samples:
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def _scrape(url: str) -> Samples:
    # A connection of its own each time: with several workers, any of them may answer.
    response = httpx.get(url, timeout=10.0, headers={"connection": "close", **OPERATOR})
    assert response.status_code == 200, response.text
    return _parse(response.text)


def _settled(url: str, expected: Mapping[tuple[str, frozenset[tuple[str, str]]], float]) -> Samples:
    """A scrape once it shows `expected`: a request is counted just after its answer is
    sent, so a scrape right behind it, by another worker, may come first."""
    latest: Samples = {}

    def shows() -> bool:
        nonlocal latest
        latest = _scrape(url)
        return all(latest.get(key) == value for key, value in expected.items())

    wait_for(shows, DEADLINE, f"scrape showing {dict(expected)}")
    return latest


def _key(name: str, **labels: str) -> tuple[str, frozenset[tuple[str, str]]]:
    return (name, frozenset(labels.items()))


def _value(samples: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    assert key in samples, f"no sample {name}{labels}"
    return samples[key]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return clean_env(
        INTAKE_DATABASE_URL=f"sqlite:///{tmp_path / 'intake.db'}",
        INTAKE_WEBHOOK_ALLOW_PRIVATE="true",  # the receiver is plain http on 127.0.0.1
        INTAKE_LOG_LEVEL="debug",
        INTAKE_METRICS_TOKEN=TOKEN,
    )


@pytest.fixture
def serve(
    env: dict[str, str], tmp_path: Path
) -> Iterator[Callable[..., tuple[str, ServedProcess]]]:
    started: list[ServedProcess] = []

    def start(workers: int | None = None, **extra: str) -> tuple[str, ServedProcess]:
        server = ServedProcess(
            {**env, **extra}, tmp_path / f"serve-{len(started)}.log", workers=workers,
            startup_timeout=DEADLINE, stop_timeout=DEADLINE,
        )  # fmt: skip
        started.append(server)
        server.start()
        return server.base, server

    try:
        yield start
    finally:
        for process in started:
            process.stop()


def _public_view(response: httpx.Response) -> tuple[int, str | None, str]:
    """All a client sees of a refusal, less what differs for every request (its id)."""
    body = response.json()
    body.pop("request_id", None)
    return (
        response.status_code,
        response.headers.get("www-authenticate"),
        json.dumps(body, sort_keys=True),
    )


def test_without_a_token_set_a_served_process_has_no_metrics_path(
    serve: Callable[..., tuple[str, ServedProcess]],
) -> None:
    base, _ = serve(INTAKE_METRICS_TOKEN="")

    unknown = httpx.get(f"{base}/no/such/path")
    answers = [
        httpx.get(f"{base}/metrics"),
        httpx.get(f"{base}/metrics", headers=OPERATOR),
    ]

    assert unknown.status_code == 404
    for answer in answers:
        assert _public_view(answer) == _public_view(unknown)
        assert "intake_" not in answer.text


def _outcome(after: Samples, before: Samples, outcome: str, route: str = PUBLIC) -> float:
    key = ("intake_submissions_total", frozenset({("route", route), ("outcome", outcome)}))
    return after[key] - before.get(key, 0.0)


def test_a_served_process_counts_outcomes_and_shows_the_backlog_until_the_relay_delivers(
    env: dict[str, str],
    receiver: Receiver,
    serve: Callable[..., tuple[str, ServedProcess]],
) -> None:
    async def setup() -> tuple[Form, Form, Form, str]:
        async with open_runtime(Settings.from_env(env)) as runtime:
            services = runtime.services
            workspace = (await services.workspaces.create("Metrics")).workspace_id
            plain = await services.forms.create(workspace)
            other = await services.forms.create(workspace)
            guarded = await services.forms.create(workspace, allowed_origins=["https://ok.example"])
            await services.webhooks.add(plain.form_id, receiver.url())
            key = await services.keys.create(workspace)
        return plain, other, guarded, key.secret

    # Set up in-process (tests/cli covers the commands); the service and the relay run
    # as the installed commands.
    plain, other, guarded, api_key = anyio.run(setup)
    # One request per client and form per 30 s: the second one is a 429.
    base, server = serve(INTAKE_RATE_LIMIT_PUBLIC_BURST="1/30")
    metrics = f"{base}/metrics"
    before = _scrape(metrics)
    body = {"email": "ada@example.com", "message": MARKER}

    answers = [
        httpx.post(f"{base}/f/{plain.public_form_key}", json=body),
        httpx.post(f"{base}/f/{plain.public_form_key}", json=body),
        httpx.post(
            f"{base}/f/{other.public_form_key}",
            content=b'{"message": "' + MARKER.encode(),
            headers={"content-type": "application/json"},
        ),
        httpx.post(
            f"{base}/f/{guarded.public_form_key}",
            json=body,
            headers={"origin": "https://evil.example"},
        ),
        httpx.post(
            f"{base}/v1/forms/{plain.form_id}/submissions",
            json=body,
            headers={"authorization": f"Bearer {api_key}"},
        ),
    ]
    histogram = "intake_http_request_duration_seconds_count"
    waiting = _settled(
        metrics, {_key(histogram, route=PUBLIC): 4, _key(histogram, route=SERVER): 1}
    )
    delivered = run_installed_cli(env, "relay", "--once")
    after = _scrape(metrics)

    assert [a.status_code for a in answers] == [201, 429, 400, 403, 201]
    assert _outcome(waiting, before, "accepted") == 1
    assert _outcome(waiting, before, "rate_limited") == 1
    assert _outcome(waiting, before, "malformed_request") == 1
    assert _outcome(waiting, before, "origin_not_allowed") == 1
    assert _outcome(waiting, before, "accepted", SERVER) == 1
    assert _value(waiting, "intake_rate_limited_total", route=PUBLIC) == 1
    assert _value(waiting, "intake_outbox_backlog") == 2
    assert _value(waiting, "intake_outbox_oldest_undelivered_age_seconds") >= 0
    assert delivered == {"delivered": 2, "failed": 0, "dead": 0, "fanned_out": 2}
    assert len(receiver.requests) == 2
    assert _value(after, "intake_outbox_backlog") == 0
    assert _value(after, "intake_deliveries", state="delivered") == 2
    assert _value(after, "intake_deliveries", state="pending") == 0

    assert server.stop() in (0, -signal.SIGTERM)
    log = server.log_text()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    access = [line for line in lines if line["logger"] == "intake.access"]
    # The five submissions, and the scrapes and health checks around them.
    assert [a["route"] for a in access if a["method"] == "POST"] == [PUBLIC] * 4 + [SERVER]
    assert [a["status"] for a in access if a["method"] == "POST"] == [201, 429, 400, 403, 201]
    assert all(a["request_id"].startswith("req_") for a in access)
    assert not [line for line in lines if line["logger"] == "uvicorn.access"]
    # At DEBUG each refusal names its step; still nothing of the contents (below).
    refusals = [line for line in lines if line["message"].startswith("refused at step")]
    assert [line["message"] for line in refusals] == [
        "refused at step rate_limit",
        "refused at step parse",
        "refused at step origin_policy",
    ]
    assert {line["level"] for line in refusals} == {"debug"}
    for secret in (MARKER, api_key, plain.public_form_key):
        assert secret not in log


def _submit(env: Mapping[str, str], public_form_key: str) -> None:
    with TestClient(create_app(Settings.from_env(env))) as client:
        response = client.post(f"/f/{public_form_key}", json={"email": "ada@example.com"})
    assert response.status_code == 201, response.text


def test_the_relay_serves_its_own_counters_on_its_metrics_port(
    env: dict[str, str], receiver: Receiver, tmp_path: Path
) -> None:
    async def setup() -> str:
        async with open_runtime(Settings.from_env(env)) as runtime:
            workspace = await runtime.services.workspaces.create("Relay")
            form = await runtime.services.forms.create(workspace.workspace_id)
            await runtime.services.webhooks.add(form.form_id, receiver.url())
        return form.public_form_key

    public_form_key = anyio.run(setup)
    port = free_port()
    metrics = f"http://127.0.0.1:{port}/metrics"
    relay = IntakeProcess(
        env, tmp_path / "relay.log", ["relay", "--metrics-port", str(port)], stop_timeout=DEADLINE
    ).start()
    try:
        relay.wait_until_answering(metrics, DEADLINE)
        idle = _scrape(metrics)
        _submit(env, public_form_key)
        delivered = _key("intake_relay_deliveries_total", result="delivered")
        after = _settled(metrics, {delivered: 1})
    finally:
        code = relay.stop()

    assert code == 0, relay.log_text()
    assert _value(idle, "intake_relay_deliveries_total", result="delivered") == 0
    assert _value(after, "intake_relay_events_fanned_out_total") == 1
    assert _value(after, "intake_relay_deliveries_total", result="failed") == 0
    assert _value(after, "intake_relay_deliveries_total", result="dead") == 0
    assert any(name == "process_cpu_seconds_total" for name, _ in after)
    assert len(receiver.requests) == 1


def test_the_relay_refuses_a_metrics_port_it_cannot_listen_on(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        code = main(["relay", "--once", "--metrics-port", str(port), "--json"])

    assert code == 1
    refusal = json.loads(capsys.readouterr().out)
    assert refusal["ok"] is False
    assert f"--metrics-port {port}" in refusal["error"]


def _accepted_by_worker(directory: Path, scratch: Path) -> dict[str, float]:
    """Each worker's own count of accepted public submissions, read from its file."""
    counts: dict[str, float] = {}
    for path in directory.glob("counter_*.db"):
        pid = path.stem.split("_")[1]
        alone = scratch / pid
        alone.mkdir(exist_ok=True)
        shutil.copyfile(path, alone / path.name)
        for family in MultiProcessCollector(None, path=str(alone)).collect():  # type: ignore[no-untyped-call]
            for sample in family.samples:
                if sample.name == "intake_submissions_total" and sample.labels == {
                    "route": PUBLIC,
                    "outcome": "accepted",
                }:
                    counts[pid] = sample.value
    return counts


@pytest.mark.services
def test_two_workers_sum_their_counts_in_every_scrape(
    env: dict[str, str],
    redis_url: str,
    serve: Callable[..., tuple[str, ServedProcess]],
    tmp_path: Path,
) -> None:
    async def setup() -> str:
        async with open_runtime(Settings.from_env(env)) as runtime:
            workspace = await runtime.services.workspaces.create("Workers", plan=Plan.BUSINESS)
            form = await runtime.services.forms.create(workspace.workspace_id)
        return form.public_form_key

    public_form_key = anyio.run(setup)
    temp = tmp_path / "tmp"
    temp.mkdir()
    base, server = serve(
        workers=2,
        INTAKE_REDIS_URL=redis_url,
        INTAKE_RATE_LIMIT_PUBLIC_BURST="10000/30",
        INTAKE_RATE_LIMIT_PUBLIC_SUSTAINED="10000/600",
        INTAKE_RATE_LIMIT_PUBLIC_FORM="10000/600",
        TMPDIR=str(temp),
    )  # fmt: skip
    (directory,) = temp.glob("intake-metrics-*")
    url = f"{base}/f/{public_form_key}"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    sent = 0

    def post(_: int) -> int:
        # A connection each: the kernel hands them to either worker.
        return httpx.post(url, json={"n": 1}, headers={"connection": "close"}).status_code

    deadline = time.monotonic() + DEADLINE
    with ThreadPoolExecutor(max_workers=8) as pool:
        while True:
            statuses = list(pool.map(post, range(16)))
            assert statuses == [201] * 16, statuses
            sent += 16
            busy = {pid for pid, n in _accepted_by_worker(directory, scratch).items() if n}
            if len(busy) >= 2:
                break
            assert time.monotonic() < deadline, "one worker took every connection"

    accepted = _key("intake_submissions_total", route=PUBLIC, outcome="accepted")
    _settled(f"{base}/metrics", {accepted: sent})
    scrapes = [_scrape(f"{base}/metrics") for _ in range(6)]

    assert [samples[accepted] for samples in scrapes] == [sent] * 6
    # A connection each, so both workers answer some: none serves the metrics without
    # the token, and a wrong token is refused as no token is.
    refusals = [
        httpx.get(f"{base}/metrics", headers={"connection": "close", **headers})
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN}) * 4
    ]
    assert len({_public_view(refused) for refused in refusals}) == 1
    assert _public_view(refusals[0])[:2] == (401, "Bearer")
    assert all("intake_" not in refused.text for refused in refusals)
    by_worker = _accepted_by_worker(directory, scratch)
    assert sum(by_worker.values()) == sent
    assert server.stop() in (0, -signal.SIGTERM), server.log_text()
    assert not directory.exists(), "the workers' metrics directory outlived the server"
