"""GET /metrics and the access log, on every backend: who may read the metrics (only a
scraper with INTAKE_METRICS_TOKEN; unset, the path is unknown, so the public never learns
how one request ended), counters that move with each outcome, the latency histogram, the
figures read from the store at scrape time (outbox backlog, deliveries by state, quota
use), and one JSON log line per request that names the route by its template and never
carries a submission's contents or a secret (docs/operations.md)."""

from __future__ import annotations

import hmac
import json
import logging
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx2
import jsonschema
import pytest
from prometheus_client.parser import text_string_to_metric_families

from intake.adapters.memory import FakeWebhookSender
from intake.config import Settings
from intake.domain.model import Challenge, ChallengeProvider, Plan
from intake.domain.ratelimit import RateLimits, RateRule
from intake.entrypoints.cli import main
from intake.logs import JsonFormatter
from intake.metrics import MULTIPROC_ENV, clear_multiprocess_files, multiprocess_directory
from intake.ports.senders import WebhookResponse
from intake.service.relay import Relay
from tests.http.conftest import (
    Seeded,
    Service,
    ServiceFactory,
    assert_error,
    assert_error_shape,
)

PUBLIC = "/f/{public_form_key}"
SERVER = "/v1/forms/{form_id}/submissions"
FIELDS = {"name": "Ada", "message": "Hello"}
# Kept as spam: a phrase and three links.
SPAM = {
    "name": "Ada",
    "message": "Buy viagra now! Click here: http://a.example http://b.example http://c.example",
}
TOKEN = "metrics-token-3c1f9a0e5b7d2c46a1e0"
OPERATOR = {"authorization": f"Bearer {TOKEN}"}
GONE = WebhookResponse(status=410)

Labels = frozenset[tuple[str, str]]


class Scrape:
    """One /metrics answer, parsed: every sample by name and labels."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response
        self.text = response.text
        self.samples: dict[tuple[str, Labels], float] = {}
        for family in text_string_to_metric_families(response.text):
            for sample in family.samples:
                self.samples[(sample.name, frozenset(sample.labels.items()))] = sample.value

    def value(self, name: str, **labels: str) -> float:
        key = (name, frozenset(labels.items()))
        assert key in self.samples, f"no sample {name}{labels} in:\n{self.text}"
        return self.samples[key]

    def minus(self, before: Scrape, name: str, **labels: str) -> float:
        """How much a counter moved since `before` (a series born since counts from 0)."""
        key = (name, frozenset(labels.items()))
        return self.value(name, **labels) - before.samples.get(key, 0.0)


def scrape(svc: Service, headers: Mapping[str, str] | None = None) -> Scrape:
    response = svc.client.get("/metrics", headers={**OPERATOR, **(headers or {})})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return Scrape(response)


def outcome(after: Scrape, before: Scrape, name: str, route: str = PUBLIC) -> float:
    return after.minus(before, "intake_submissions_total", route=route, outcome=name)


@pytest.fixture
def svc(make_service: ServiceFactory) -> Service:
    """The operator's view: the service with a metrics token, which `scrape` sends."""
    return make_service(Settings(metrics_token=TOKEN))


@pytest.fixture
def limited(make_service: ServiceFactory) -> Seeded:
    """One request per client and form per 30 s: a second one is refused at once."""
    rates = RateLimits(public_burst=RateRule(1, 30))
    return Seeded(make_service(Settings(rate_limits=rates, metrics_token=TOKEN)))


# -- the endpoint -------------------------------------------------------------------------


def test_metrics_answers_the_prometheus_text_format_as_the_document_says(svc: Service) -> None:
    document = svc.client.get("/openapi.json").json()

    response = svc.client.get("/metrics", headers=OPERATOR)

    assert response.status_code == 200
    assert response.headers["x-request-id"]
    assert response.headers["cache-control"] == "no-store"
    documented = document["paths"]["/metrics"]["get"]["responses"]["200"]
    media = response.headers["content-type"].split(";")[0]
    assert media in documented["content"]
    families = {f.name for f in text_string_to_metric_families(response.text)}
    assert {
        "intake_http_requests",
        "intake_http_request_duration_seconds",
        "intake_submissions",
        "intake_rate_limited",
        "intake_quota_refusals",
        "intake_store_up",
        "intake_outbox_backlog",
        "intake_outbox_oldest_undelivered_age_seconds",
        "intake_deliveries",
        "intake_quota_used",
        "intake_quota_workspaces",
    } <= families


def test_metrics_speaks_openmetrics_when_asked(svc: Service) -> None:
    response = svc.client.get(
        "/metrics",
        headers={**OPERATOR, "accept": "application/openmetrics-text; version=1.0.0"},
    )

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")


def test_every_outcome_series_exists_before_its_first_request(svc: Service) -> None:
    metrics = scrape(svc)

    for route in (PUBLIC, SERVER):
        assert outcome(metrics, metrics, "accepted", route) == 0
        assert metrics.value("intake_submissions_total", route=route, outcome="quota_exceeded") == 0
        assert metrics.value("intake_rate_limited_total", route=route) == 0


# -- counters -----------------------------------------------------------------------------


def test_counters_move_with_a_201_a_400_a_429_and_a_403(limited: Seeded) -> None:
    svc = limited.svc
    key = limited.form.public_form_key
    guarded = svc.form(limited.workspace.workspace_id, allowed_origins=["https://ok.example"])
    before = scrape(svc)

    assert svc.public(key, data=FIELDS, peer="198.51.100.1").status_code == 201
    assert_error(
        svc.public(key, content=b"{not json", peer="198.51.100.2", headers=JSON),
        "malformed_request",
    )
    assert_error(svc.public(key, data=FIELDS, peer="198.51.100.1"), "rate_limited")
    assert_error(
        svc.public(guarded.public_form_key, data=FIELDS, origin="https://evil.example"),
        "origin_not_allowed",
    )
    after = scrape(svc)

    assert outcome(after, before, "accepted") == 1
    assert outcome(after, before, "malformed_request") == 1
    assert outcome(after, before, "rate_limited") == 1
    assert outcome(after, before, "origin_not_allowed") == 1
    assert outcome(after, before, "validation_failed") == 0
    assert after.minus(before, "intake_rate_limited_total", route=PUBLIC) == 1
    assert after.minus(before, "intake_rate_limited_total", route=SERVER) == 0
    requests = "intake_http_requests_total"
    assert after.minus(before, requests, route=PUBLIC, method="POST", status="2xx") == 1
    assert after.minus(before, requests, route=PUBLIC, method="POST", status="4xx") == 3
    histogram = "intake_http_request_duration_seconds"
    assert after.minus(before, f"{histogram}_count", route=PUBLIC) == 4
    assert after.minus(before, f"{histogram}_bucket", route=PUBLIC, le="+Inf") == 4
    assert after.value("intake_http_request_duration_seconds_sum", route=PUBLIC) > 0


def test_the_server_route_and_a_replay_are_counted_apart(seeded: Seeded) -> None:
    svc = seeded.svc
    before = scrape(svc)

    first = svc.server(seeded.form.form_id, seeded.key.secret, data=FIELDS, idempotency_key="k1")
    again = svc.server(seeded.form.form_id, seeded.key.secret, data=FIELDS, idempotency_key="k1")
    assert_error(svc.server(seeded.form.form_id, "intake_sk_wrong", data=FIELDS), "unauthorized")
    after = scrape(svc)

    assert (first.status_code, again.status_code) == (201, 200)
    assert outcome(after, before, "accepted", SERVER) == 1
    assert outcome(after, before, "replayed", SERVER) == 1
    assert outcome(after, before, "unauthorized", SERVER) == 1
    assert outcome(after, before, "accepted", PUBLIC) == 0


def test_a_filled_honeypot_counts_as_accepted_like_the_answer_it_gets(seeded: Seeded) -> None:
    svc = seeded.svc
    before = scrape(svc)

    response = svc.public(seeded.form.public_form_key, data={**FIELDS, "_gotcha": "bot"})
    after = scrape(svc)

    assert response.status_code == 201
    assert outcome(after, before, "accepted") == 1
    assert not any("honeypot" in name for name, _ in after.samples)


def test_a_quota_refusal_is_counted_and_the_workspace_shows_as_reached(svc: Service) -> None:
    full = svc.workspace(plan=Plan.FREE, monthly_limit=1)
    near = svc.workspace(plan=Plan.FREE, monthly_limit=5)
    roomy = svc.workspace(plan=Plan.FREE, monthly_limit=100)
    forms = {ws.workspace_id: svc.form(ws.workspace_id) for ws in (full, near, roomy)}
    sent = [(full, 2), (near, 4), (roomy, 3)]
    before = scrape(svc)
    answers = [
        svc.public(forms[ws.workspace_id].public_form_key, data=FIELDS, peer=f"198.51.100.{i}")
        for ws, count in sent
        for i in range(count)
    ]

    after = scrape(svc)

    assert [a.status_code for a in answers] == [201, 429] + [201] * 7
    assert outcome(after, before, "quota_exceeded") == 1
    assert after.minus(before, "intake_quota_refusals_total", route=PUBLIC) == 1
    assert after.minus(before, "intake_rate_limited_total", route=PUBLIC) == 0
    assert after.value("intake_quota_used") == 1 + 4 + 3
    assert after.value("intake_quota_workspaces", level="reached") == 1
    assert after.value("intake_quota_workspaces", level="near") == 1  # 4 of 5


def test_an_unexpected_fault_counts_as_service_unavailable(seeded: Seeded) -> None:
    svc = seeded.svc

    class Exploding:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

        async def resolve_public_key(self, public_form_key: str) -> None:
            raise RuntimeError("nobody planned for this")

    before = scrape(svc)
    svc.store.forms = Exploding(svc.store.forms)

    assert_error(svc.public(seeded.form.public_form_key, data=FIELDS), "service_unavailable")
    after = scrape(svc)

    assert outcome(after, before, "service_unavailable") == 1
    requests = "intake_http_requests_total"
    assert after.minus(before, requests, route=PUBLIC, method="POST", status="5xx") == 1


def test_routes_are_labelled_by_template_never_by_path(seeded: Seeded) -> None:
    svc = seeded.svc
    key = seeded.form.public_form_key

    svc.client.get(f"/f/{key}/thanks")
    svc.client.options(f"/f/{key}")
    svc.client.get(f"/f/{key}")  # a wrong method on a known path
    svc.client.get("/wp-login.php")
    svc.client.post(f"/f/{key}", data=FIELDS)
    metrics = scrape(svc)

    requests = "intake_http_requests_total"
    thanks = "/f/{public_form_key}/thanks"
    assert metrics.value(requests, route=thanks, method="GET", status="2xx") == 1
    assert metrics.value(requests, route=PUBLIC, method="OPTIONS", status="2xx") == 1
    assert metrics.value(requests, route=PUBLIC, method="GET", status="4xx") == 1
    assert metrics.value(requests, route="unmatched", method="GET", status="4xx") == 1
    assert key not in metrics.text
    assert "wp-login" not in metrics.text
    assert seeded.form.form_id not in metrics.text
    assert seeded.workspace.workspace_id not in metrics.text


def test_an_unknown_method_is_one_label_value(svc: Service) -> None:
    svc.client.request("BREW", "/healthz")
    svc.client.request("PROPFIND", "/healthz")

    metrics = scrape(svc)

    requests = "intake_http_requests_total"
    assert metrics.value(requests, route="/healthz", method="OTHER", status="4xx") == 2
    assert "BREW" not in metrics.text


# -- figures read from the store ----------------------------------------------------------


# Also on PostgreSQL: the relay's claim (SKIP LOCKED) and its fan-out.
@pytest.mark.postgres_smoke
def test_the_backlog_rises_with_a_submission_and_falls_once_the_relay_delivers_it(
    seeded: Seeded,
) -> None:
    svc = seeded.svc
    svc.run(svc.services.webhooks.add, seeded.form.form_id, "https://hooks.example.com/intake")
    empty = scrape(svc)
    assert empty.value("intake_outbox_backlog") == 0
    assert empty.value("intake_outbox_oldest_undelivered_age_seconds") == 0

    assert svc.public(seeded.form.public_form_key, data=FIELDS).status_code == 201
    svc.clock.advance(42)
    waiting = scrape(svc)
    sender = FakeWebhookSender()
    totals = svc.run(Relay(svc.store, sender, None, svc.clock).run_once)
    delivered = scrape(svc)

    assert waiting.value("intake_outbox_backlog") == 1
    assert waiting.value("intake_outbox_unpublished") == 1
    assert waiting.value("intake_outbox_oldest_undelivered_age_seconds") == 42
    assert (totals.fanned_out, totals.delivered) == (1, 1)
    assert len(sender.delivered()) == 1
    assert delivered.value("intake_outbox_backlog") == 0
    assert delivered.value("intake_outbox_unpublished") == 0
    assert delivered.value("intake_outbox_oldest_undelivered_age_seconds") == 0
    assert delivered.value("intake_deliveries", state="delivered") == 1
    assert delivered.value("intake_deliveries", state="pending") == 0
    assert delivered.value("intake_deliveries", state="dead") == 0


# Also on PostgreSQL: the relay's claim (SKIP LOCKED) and its fan-out.
@pytest.mark.postgres_smoke
def test_a_delivery_parked_as_dead_shows_in_its_state(seeded: Seeded) -> None:
    svc = seeded.svc
    url = "https://hooks.example.com/gone"
    svc.run(svc.services.webhooks.add, seeded.form.form_id, url)
    svc.public(seeded.form.public_form_key, data=FIELDS)
    sender = FakeWebhookSender()
    sender.script(url, GONE)

    svc.run(Relay(svc.store, sender, None, svc.clock).run_once)
    metrics = scrape(svc)

    assert metrics.value("intake_deliveries", state="dead") == 1
    assert metrics.value("intake_outbox_backlog") == 0


def test_without_its_store_metrics_still_answers_with_the_process_counts(svc: Service) -> None:
    svc.client.get("/healthz")
    svc.run(svc.store.close)

    metrics = scrape(svc)

    assert metrics.value("intake_store_up") == 0
    requests = "intake_http_requests_total"
    assert metrics.value(requests, route="/healthz", method="GET", status="2xx") == 1
    assert not any(name.startswith("intake_outbox") for name, _ in metrics.samples)


# -- who may read it ---------------------------------------------------------------------


def public_view(response: httpx2.Response) -> tuple[int, dict[str, str], object]:
    """All a client sees of an answer, less what differs for every request (its id)."""
    headers = {
        name: value
        for name, value in response.headers.items()
        if name not in ("x-request-id", "content-length")
    }
    if not headers.get("content-type", "").startswith("application/json"):
        return response.status_code, headers, response.text
    body = response.json()
    body.pop("request_id", None)
    return response.status_code, headers, body


def test_without_a_token_configured_metrics_is_an_unknown_path(
    make_service: ServiceFactory,
) -> None:
    svc = make_service(Settings())
    unknown = svc.client.get("/no/such/path")

    answers = [
        svc.client.get("/metrics"),
        svc.client.get("/metrics", headers={"authorization": "Bearer anything"}),
        svc.client.get("/metrics", headers={"accept": "application/openmetrics-text"}),
    ]

    assert_error(unknown, "form_not_found")
    for answer in answers:
        assert_error(answer, "form_not_found")
        assert public_view(answer) == public_view(unknown)
        assert "intake_" not in answer.text


def test_with_a_token_set_metrics_wants_it_as_a_bearer_token(
    make_service: ServiceFactory,
) -> None:
    svc = make_service(Settings(metrics_token=TOKEN))
    document = svc.client.get("/openapi.json").json()

    allowed = svc.client.get("/metrics", headers=OPERATOR)
    lowercase = svc.client.get("/metrics", headers={"authorization": f"bearer {TOKEN}"})

    assert allowed.status_code == 200
    assert "intake_http_requests_total" in allowed.text
    assert lowercase.status_code == 200  # the scheme is case-insensitive (RFC 9110)
    assert document["paths"]["/metrics"]["get"]["security"] == [{"metricsToken": []}]


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Bearer wrong",
        f"Bearer {TOKEN[:-1]}",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN.upper()}",
        f"Basic {TOKEN}",
        TOKEN,
    ],
)
def test_a_wrong_token_is_refused_exactly_as_no_token(
    make_service: ServiceFactory, authorization: str | None
) -> None:
    svc = make_service(Settings(metrics_token=TOKEN))
    documented = svc.client.get("/openapi.json").json()["paths"]["/metrics"]["get"]
    without = svc.client.get("/metrics")
    headers = {} if authorization is None else {"authorization": authorization}

    refused = svc.client.get("/metrics", headers=headers)

    # The envelope and the code's status, in words of its own: no API key would do.
    body = assert_error_shape(refused, "unauthorized")
    assert body["error"]["message"] == "This endpoint requires the operator's metrics token."
    assert refused.headers["www-authenticate"] == "Bearer"
    assert public_view(refused) == public_view(without)
    schema = documented["responses"]["401"]["content"]["application/json"]["schema"]
    jsonschema.validate(body, schema)
    assert "intake_" not in refused.text


def test_the_token_is_compared_in_constant_time_whatever_its_length(
    make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = make_service(Settings(metrics_token=TOKEN))
    compared: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def compare(a: bytes, b: bytes) -> bool:
        compared.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", compare)

    for given in ("x", TOKEN[:-1], TOKEN + "-and-more", TOKEN):
        svc.client.get("/metrics", headers={"authorization": f"Bearer {given}"})

    # Digests of one length: neither the contents nor the length of the token show.
    assert len(compared) == 4
    assert len(set(compared)) == 1


@pytest.mark.parametrize("token", [None, TOKEN], ids=["no-token", "token"])
def test_the_public_cannot_tell_a_honeypot_from_spam_or_a_real_submission(
    make_service: ServiceFactory, token: str | None
) -> None:
    seeded = Seeded(make_service(Settings(metrics_token=token)))
    svc, key = seeded.svc, seeded.form.public_form_key
    svc.run(svc.services.webhooks.add, seeded.form.form_id, "https://hooks.example.com/intake")

    def look() -> tuple[int, dict[str, str], object]:
        return public_view(svc.client.get("/metrics", headers={"authorization": "Bearer x"}))

    views = [look()]
    for data in ({**FIELDS, "_gotcha": "bot"}, SPAM, FIELDS):
        assert svc.public(key, data=data).status_code == 201
        views.append(look())

    assert views[0][0] in (401, 404)
    assert all(view == views[0] for view in views), views
    # The operator does see them, apart: a real submission uses the quota.
    if token is not None:
        assert scrape(svc).value("intake_quota_used") == 1


# -- the access log -----------------------------------------------------------------------


def access_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    formatter = JsonFormatter()
    return [json.loads(formatter.format(r)) for r in caplog.records if r.name == "intake.access"]


def test_each_request_is_one_json_line_with_its_facts(
    seeded: Seeded, caplog: pytest.LogCaptureFixture
) -> None:
    svc = seeded.svc
    caplog.set_level(logging.INFO, logger="intake.access")

    created = svc.public(seeded.form.public_form_key, data=FIELDS)
    refused = svc.server(seeded.form.form_id, None, data=FIELDS)
    unknown = svc.client.get("/no/such/thing")

    lines = access_lines(caplog)
    assert [line["request_id"] for line in lines] == [
        r.headers["x-request-id"] for r in (created, refused, unknown)
    ]
    first, second, third = lines
    assert set(first) == {
        "time", "level", "logger", "message", "request_id", "method", "route", "form_id",
        "outcome", "status", "duration_ms",
    }  # fmt: skip
    assert (first["method"], first["route"], first["status"]) == ("POST", PUBLIC, 201)
    assert (first["form_id"], first["outcome"]) == (seeded.form.form_id, "accepted")
    assert isinstance(first["duration_ms"], float)
    assert first["duration_ms"] >= 0
    assert (second["route"], second["status"], second["outcome"]) == (SERVER, 401, "unauthorized")
    assert second["form_id"] is None  # never looked up without a key
    assert (third["route"], third["status"], third["outcome"]) == ("unmatched", 404, None)
    assert seeded.form.public_form_key not in caplog.text
    assert "/no/such/thing" not in json.dumps(lines)


def test_no_log_record_at_debug_carries_contents_or_secrets(
    make_service: ServiceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    svc = make_service(Settings(metrics_token=TOKEN))
    seeded = Seeded(svc)
    guarded = svc.form(
        seeded.workspace.workspace_id,
        challenge=Challenge(ChallengeProvider.TURNSTILE, CHALLENGE_SECRET),
    )
    caplog.set_level(logging.DEBUG)

    svc.public(seeded.form.public_form_key, json={"message": MARKER, "email": "a@example.com"})
    svc.server(
        seeded.form.form_id,
        seeded.key.secret,
        data={"message": MARKER},
        idempotency_key=MARKER_KEY,
    )
    svc.server(seeded.form.form_id, seeded.key.secret + "x", data={"message": MARKER})
    svc.public(guarded.public_form_key, data={"message": MARKER, "cf-turnstile-response": MARKER})
    svc.public(seeded.form.public_form_key, content=b"{" + MARKER.encode(), headers=JSON)
    svc.client.get("/metrics", headers={"authorization": f"Bearer {TOKEN}"})
    svc.client.get("/metrics", headers={"authorization": f"Bearer {TOKEN}-wrong"})

    formatter = JsonFormatter()
    lines = [formatter.format(record) for record in caplog.records]
    assert sum('"logger": "intake.access"' in line for line in lines) == 7
    for secret in (MARKER, MARKER_KEY, CHALLENGE_SECRET, TOKEN, seeded.key.secret):
        assert not any(secret in line for line in lines), secret


MARKER = "private-words-b41d"
MARKER_KEY = "idem-key-77aa"
CHALLENGE_SECRET = "challenge-secret-e0f2"
JSON = {"content-type": "application/json"}


# -- several workers ----------------------------------------------------------------------


def _touch(directory: Path, *names: str) -> None:
    for name in names:
        (directory / name).write_bytes(b"x")


def test_the_operators_directory_is_cleared_of_metric_files_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    metric_files = ("counter_12.db", "histogram_3.db", "gauge_livesum_9.db")
    _touch(tmp_path, *metric_files, "intake.db", "counter_notes.db", "notes.txt")
    monkeypatch.setenv(MULTIPROC_ENV, str(tmp_path))

    with multiprocess_directory(workers=4) as chosen:
        assert chosen == str(tmp_path)
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            "counter_notes.db",
            "intake.db",
            "notes.txt",
        ]
    assert os.environ[MULTIPROC_ENV] == str(tmp_path)
    assert tmp_path.exists()


def test_several_workers_get_a_fresh_directory_that_is_removed_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MULTIPROC_ENV, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR afresh

    with multiprocess_directory(workers=2) as chosen:
        assert chosen is not None
        made = Path(chosen)
        assert made.parent == tmp_path
        assert os.environ[MULTIPROC_ENV] == chosen
        assert list(made.iterdir()) == []
        _touch(made, "counter_1.db")

    assert not made.exists()
    assert MULTIPROC_ENV not in os.environ


def test_one_worker_needs_no_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MULTIPROC_ENV, raising=False)

    with multiprocess_directory(workers=1) as chosen:
        assert chosen is None
        assert MULTIPROC_ENV not in os.environ


def test_serve_hands_several_workers_a_metrics_directory_for_as_long_as_they_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("INTAKE_")] + [MULTIPROC_ENV]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("INTAKE_DATABASE_URL", f"sqlite:///{tmp_path / 'intake.db'}")
    # Never reached: nothing listens on port 1.
    monkeypatch.setenv("INTAKE_REDIS_URL", "redis://127.0.0.1:1/0")
    calls: list[tuple[dict[str, Any], str | None]] = []

    def run_server(listener: socket.socket, *args: Any, **kwargs: Any) -> None:
        listener.close()
        directory = os.environ.get(MULTIPROC_ENV)
        assert directory is not None
        assert Path(directory).is_dir()
        calls.append((kwargs, directory))

    monkeypatch.setattr("intake.entrypoints.cli.serve.listen", lambda host, port: socket.socket())
    monkeypatch.setattr("intake.entrypoints.cli.serve.run_server", run_server)

    assert main(["serve", "--workers", "2", "--json"]) == 0

    ((kwargs, directory),) = calls
    assert kwargs["workers"] == 2
    assert kwargs["access_log"] is False  # the app's own access log instead
    assert kwargs["ws"] == "none"
    assert directory is not None
    assert not Path(directory).exists()
    assert MULTIPROC_ENV not in os.environ


def test_clearing_a_directory_counts_what_it_removed(tmp_path: Path) -> None:
    _touch(tmp_path, "counter_1.db", "summary_2.db", "other.db")

    assert clear_multiprocess_files(str(tmp_path)) == 2
    assert clear_multiprocess_files(str(tmp_path)) == 0
