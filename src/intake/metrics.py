"""Prometheus metrics: the HTTP service's instruments, the relay's, and the figures read
from the store when /metrics is scraped. docs/operations.md lists every metric.

Labels are bounded on purpose: route templates, outcome codes, status classes and
delivery states, never a form, a key or a workspace, so a series count never grows with
the data.

Several worker processes share their counts through prometheus-client's multiprocess
mode: with PROMETHEUS_MULTIPROC_DIR set before the process starts, every instrument
writes to a file there and a scrape of any worker sums them all. `intake serve
--workers N` makes such a directory itself (`multiprocess_directory`).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, values
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from intake.domain.errors import SUBMISSION_CODES, ErrorCode
from intake.service.health import StoreFigures
from intake.service.relay import RelayRound

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

# From a millisecond (a refusal that never reads the body) to the body timeout.
DURATION_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
OUTCOMES = ("accepted", "replayed", *(code.value for code in SUBMISSION_CODES))
# Any other method is one label value, so a client cannot mint series.
_METHODS = frozenset({"GET", "HEAD", "POST", "OPTIONS", "PUT", "PATCH", "DELETE"})
RELAY_RESULTS = ("delivered", "failed", "dead")
# The files prometheus-client writes in multiprocess mode (`counter_1234.db`, ...):
# only these are cleared from a directory an operator names, whatever else is there.
_MULTIPROC_FILE = re.compile(r"(counter|histogram|summary|gauge_[a-z]+)_\d+\.db")


def multiprocess_mode() -> bool:
    """Whether this process's instruments write to the shared directory. It is decided
    when prometheus-client is first imported, so the variable must be set before the
    process starts; set later, it is ignored rather than half applied."""
    return values.ValueClass is not values.MutexValue and bool(os.environ.get(MULTIPROC_ENV))


def clear_multiprocess_files(directory: str) -> int:
    """Deletes the metric files a previous run left (their counts would be added to this
    run's); returns how many. Other files are left alone."""
    removed = 0
    for entry in os.scandir(directory):
        if entry.is_file() and _MULTIPROC_FILE.fullmatch(entry.name):
            os.unlink(entry.path)
            removed += 1
    return removed


@contextmanager
def multiprocess_directory(workers: int) -> Iterator[str | None]:
    """For `intake serve`, around the workers' whole life: the operator's
    PROMETHEUS_MULTIPROC_DIR, created if missing and cleared of a previous run's files;
    else, for several workers, a fresh temporary one, removed at the end. One worker
    without the variable needs none."""
    chosen = os.environ.get(MULTIPROC_ENV)
    if chosen:
        os.makedirs(chosen, exist_ok=True)
        clear_multiprocess_files(chosen)
        yield chosen
        return
    if workers <= 1:
        yield None
        return
    made = tempfile.mkdtemp(prefix="intake-metrics-")
    os.environ[MULTIPROC_ENV] = made
    try:
        yield made
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
        shutil.rmtree(made, ignore_errors=True)


class _Joined(Collector):
    """Several collectors exposed as one, so one scrape is one document."""

    def __init__(self, parts: Iterable[Collector | MultiProcessCollector]) -> None:
        self._parts = list(parts)

    def collect(self) -> Iterable[Metric]:
        for part in self._parts:
            yield from part.collect()


def render(
    parts: Iterable[Collector | MultiProcessCollector], accept: str | None
) -> tuple[bytes, str]:
    """The exposition in the format the scraper asks for (Prometheus text by default,
    OpenMetrics on request), and its content type."""
    encoder, content_type = choose_encoder(accept or "")
    return encoder(_Joined(parts)), content_type


def _status_class(status: int) -> str:
    return f"{status // 100}xx" if 100 <= status < 600 else "none"


class HttpMetrics:
    """What the HTTP layer records about every request; `observe` is its only call."""

    def __init__(
        self, registry: CollectorRegistry | None, submission_routes: Iterable[str]
    ) -> None:
        self._requests = Counter(
            "intake_http_requests",
            "HTTP requests answered, by route template, method and status class.",
            ["route", "method", "status"],
            registry=registry,
        )
        self._duration = Histogram(
            "intake_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer, by route template.",
            ["route"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self._submissions = Counter(
            "intake_submissions",
            "Submission requests by route and outcome: accepted, replayed, or the error "
            "code answered.",
            ["route", "outcome"],
            registry=registry,
        )
        self._rate_limited = Counter(
            "intake_rate_limited",
            "Submissions refused by the rate limiter, by route.",
            ["route"],
            registry=registry,
        )
        self._quota_refusals = Counter(
            "intake_quota_refusals",
            "Submissions refused because the workspace's monthly quota was used up, by route.",
            ["route"],
            registry=registry,
        )
        # Every series a submission route can have exists from the start at 0, so a
        # rate() sees the first one counted.
        for route in submission_routes:
            for outcome in OUTCOMES:
                self._submissions.labels(route, outcome)
            self._rate_limited.labels(route)
            self._quota_refusals.labels(route)
        # Label lookups cached: the label sets are bounded, and a request then costs a
        # dict lookup per instrument.
        self._request_children: dict[tuple[str, str, str], Counter] = {}
        self._duration_children: dict[str, Histogram] = {}
        self._outcome_children: dict[tuple[str, str], Counter] = {}

    def observe(
        self, *, route: str, method: str, status: int, outcome: str | None, seconds: float
    ) -> None:
        key = (route, method if method in _METHODS else "OTHER", _status_class(status))
        requests = self._request_children.get(key)
        if requests is None:
            requests = self._request_children[key] = self._requests.labels(*key)
        requests.inc()
        duration = self._duration_children.get(route)
        if duration is None:
            duration = self._duration_children[route] = self._duration.labels(route)
        duration.observe(seconds)
        if outcome is None:
            return
        submissions = self._outcome_children.get((route, outcome))
        if submissions is None:
            submissions = self._outcome_children[route, outcome] = self._submissions.labels(
                route, outcome
            )
        submissions.inc()
        if outcome == ErrorCode.RATE_LIMITED.value:
            self._rate_limited.labels(route).inc()
        elif outcome == ErrorCode.QUOTA_EXCEEDED.value:
            self._quota_refusals.labels(route).inc()


class ServiceMetrics:
    """The service process's instruments and its /metrics document."""

    def __init__(self, submission_routes: Iterable[str]) -> None:
        self.multiprocess = multiprocess_mode()
        # In multiprocess mode the instruments write to the shared files and a scrape
        # reads those; otherwise this process's own registry holds them.
        self._registry = None if self.multiprocess else CollectorRegistry()
        if self._registry is not None:
            ProcessCollector(registry=self._registry)
        self.http = HttpMetrics(self._registry, submission_routes)
        # The most of the live workers: 1 while any of them holds its windows alone.
        self._fallback = Gauge(
            "intake_rate_limiter_fallback",
            "1 while the rate limiter holds its windows per process because Redis is "
            "unreachable (each of N workers then admits up to the limit); 0 otherwise.",
            registry=self._registry,
            multiprocess_mode="livemax",
        )

    def rate_limiter_fallback(self, degraded: bool) -> None:
        """What FallbackRateLimiter reports as it falls back and recovers."""
        self._fallback.set(1 if degraded else 0)

    def render(self, figures: StoreFigures | None, accept: str | None) -> tuple[bytes, str]:
        process: Collector | MultiProcessCollector
        if self._registry is None:
            process = MultiProcessCollector(None, path=os.environ[MULTIPROC_ENV])  # type: ignore[no-untyped-call]
        else:
            process = self._registry
        return render([process, _StoreCollector(figures)], accept)


class RelayMetrics:
    """The relay process's counters, served by `intake relay --metrics-port`."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._fanned_out = Counter(
            "intake_relay_events_fanned_out",
            "Outbox events fanned out into one delivery per destination.",
            registry=registry,
        )
        self._attempts = Counter(
            "intake_relay_deliveries",
            "Delivery attempts by result: delivered, failed (to be retried) or dead "
            "(parked after its last attempt, or refused for good).",
            ["result"],
            registry=registry,
        )
        self._results = {result: self._attempts.labels(result) for result in RELAY_RESULTS}

    def record(self, progress: RelayRound) -> None:
        """What the relay reports as it goes (`Relay.report_progress`)."""
        if progress.fanned_out:
            self._fanned_out.inc(progress.fanned_out)
        for result, count in (
            ("delivered", progress.delivered),
            ("failed", progress.failed),
            ("dead", progress.dead),
        ):
            if count:
                self._results[result].inc(count)


# -- figures read from the store at scrape time (service/health.py) ---------------------


class _StoreCollector(Collector):
    def __init__(self, figures: StoreFigures | None) -> None:
        self._figures = figures

    def collect(self) -> Iterable[Metric]:
        figures = self._figures
        yield GaugeMetricFamily(
            "intake_store_up",
            "1 when the store answered this scrape's queries; 0 leaves out the figures "
            "read from it.",
            value=0 if figures is None else 1,
        )
        if figures is None:
            return
        yield GaugeMetricFamily(
            "intake_outbox_backlog",
            "Events not yet delivered: outbox rows not yet fanned out, and pending deliveries.",
            value=figures.backlog,
        )
        yield GaugeMetricFamily(
            "intake_outbox_oldest_undelivered_age_seconds",
            "Age of the oldest of the backlog (0 when there is none).",
            value=figures.oldest_age_seconds,
        )
        yield GaugeMetricFamily(
            "intake_outbox_unpublished",
            "Outbox rows the relay has not yet fanned out.",
            value=figures.deliveries.unpublished,
        )
        states = GaugeMetricFamily(
            "intake_deliveries",
            "Deliveries kept, by state (`intake purge` deletes delivered ones in time).",
            labels=["state"],
        )
        counts = figures.deliveries
        for state, count in (
            ("pending", counts.pending),
            ("delivered", counts.delivered),
            ("dead", counts.dead),
        ):
            states.add_metric([state], count)
        yield states
        yield GaugeMetricFamily(
            "intake_quota_used",
            "Submissions counted against the workspaces' quotas this month (UTC), in all.",
            value=figures.quota_used,
        )
        levels = GaugeMetricFamily(
            "intake_quota_workspaces",
            "Workspaces by this month's quota use: near (80% of the ceiling or more) and "
            "reached (refusing with quota_exceeded).",
            labels=["level"],
        )
        levels.add_metric(["near"], figures.workspaces_near_ceiling)
        levels.add_metric(["reached"], figures.workspaces_at_ceiling)
        yield levels
