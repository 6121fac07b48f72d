"""The figures the targets are held to, read back from a run's results document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench import cli_startup, client_size, keepalive
from bench.targets import Ceiling, Figures, FixedRate, Phase, RoundTrips


def _phase(document: Mapping[str, Any] | None) -> Phase | None:
    return None if document is None else Phase.from_json(dict(document))


def _ceiling(document: Mapping[str, Any]) -> Ceiling:
    cpu = document.get("server_cpu_ms_per_request")
    return Ceiling(
        per_s=float(document["accepted_per_s"]),
        stack=str(document.get("stack", "")),
        cpu_ms=None if cpu is None else float(cpu),
    )


def _round_trips(document: Mapping[str, Any] | None) -> RoundTrips | None:
    if document is None:
        return None
    return RoundTrips(
        postgres=float(document["postgres_per_accepted"]),
        redis=float(document["redis_per_accepted"]),
    )


def figures_of(results: Mapping[str, Any]) -> Figures:
    prefilled = results.get("production_prefilled")
    storage = results.get("storage_ceiling")
    fastest = results.get("framework_ceiling_fastest")
    return Figures(
        serving=_ceiling(results["framework_ceiling"]),
        fastest=_ceiling(fastest) if fastest else None,
        storage_per_s=float(storage["commits_per_s"]) if storage else None,
        production=Phase.from_json(dict(results["production"])),
        production_submissions=int(results.get("production_submissions", 0)),
        two_workers=_phase(results.get("production_2_workers")),
        fixed_rate=FixedRate.from_json(results.get("fixed_rate")),
        prefilled=_phase(prefilled),
        stored_when_prefilled=int(prefilled["stored"]) if prefilled else 0,
        embedded=_phase(results.get("embedded")),
        round_trips=_round_trips(results.get("round_trips")),
        keepalive_p50_ms=keepalive.p50_of(results),
        cli_startup_s=cli_startup.p50_of(results),
        client_gzip_bytes=client_size.gzip_bytes_of(results),
        baseline=_phase(results.get("production_baseline")),
        baseline_revision=str(results.get("baseline", {}).get("revision", "")),
    )
