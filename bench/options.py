"""`python -m bench` options."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from attrs import frozen

# The tree measured beside this one for PostgreSQL's CPU per submission (bench/baseline.py):
# main before the commit path's indexes and triggers were cut.
DEFAULT_COMPARE_REF = "4597a51"


@frozen
class Options:
    duration: float
    rounds: int
    warmup: float
    connections: int
    threads: int
    prefill: int
    production_submissions: int
    storage_clients: int
    skip_embedded: bool
    profile: bool
    profile_dir: Path | None
    output: Path
    # None: the bench's own server (bench/services.py).
    admin_url: str | None
    redis_url: str | None
    quick: bool
    listing_rows: int = 1_000_000
    listing_only: bool = False
    dashboard_rows: int = 100_000
    dashboard_only: bool = False
    embedded_only: bool = False
    # A git ref whose tree production is measured beside, or None.
    compare_ref: str | None = DEFAULT_COMPARE_REF
    # Submissions a second offered to one worker and to two alike (bench/fixed_rate.py);
    # None: half what one worker accepted at saturation in the same run.
    fixed_rate: float | None = None

    @property
    def postgres(self) -> str:
        """The PostgreSQL admin URL, once the bench's own server, if any, is started."""
        if self.admin_url is None:
            raise RuntimeError("no PostgreSQL server yet: bench.services starts one")
        return self.admin_url

    @property
    def redis(self) -> str:
        if self.redis_url is None:
            raise RuntimeError("no Redis server yet: bench.services starts one")
        return self.redis_url


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _not_negative(text: str) -> int:
    value = int(text.replace("_", ""))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, not {value}")
    return value


# The dashboard's pages hold what each is checked for (a spam row, a dead delivery) from
# this many seeded rows on.
MIN_DASHBOARD_ROWS = 1_000


def _dashboard_rows(text: str) -> int:
    value = _not_negative(text)
    if 0 < value < MIN_DASHBOARD_ROWS:
        raise argparse.ArgumentTypeError(f"must be 0 or at least {MIN_DASHBOARD_ROWS:,}")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above zero, not {text}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description=(
            "Load-test intake serve in production (PostgreSQL + Redis; one worker and two)"
            " and embedded (SQLite) settings against the framework ceiling, on the stack"
            " intake serves with and on uvloop + httptools, and the storage ceiling, on"
            " the same machine."
        ),
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="short runs and a small prefill: a smoke test of the bench itself",
    )
    p.add_argument(
        "--duration",
        type=_seconds,
        help="seconds each server is measured, all rounds together (default 30; --quick 4)",
    )
    p.add_argument(
        "--rounds",
        type=_positive,
        help="rounds the duration is split into, each server taking its turn in each"
        " (default 3; --quick 2)",
    )
    p.add_argument(
        "--warmup",
        type=_seconds,
        help="seconds of load before each measured run (default 5; --quick 1)",
    )
    p.add_argument("--connections", type=_positive, default=32, help="wrk connections (default 32)")
    p.add_argument("--threads", type=_positive, default=2, help="wrk threads (default 2)")
    p.add_argument(
        "--fixed-rate",
        type=_positive,
        help="submissions a second offered to one production worker and to two alike, for"
        " their CPU per submission below saturation (default: half what one worker"
        " accepted at saturation in the same run)",
    )
    p.add_argument(
        "--prefill",
        type=_not_negative,
        help="submissions bulk-loaded before the last production run "
        "(default 1,000,000; --quick 20,000; 0 skips it)",
    )
    p.add_argument(
        "--production-submissions",
        type=_not_negative,
        help="submissions pushed through the production server before its "
        "memory is read (default 100,000; --quick 2,000)",
    )
    p.add_argument(
        "--skip-embedded", action="store_true", help="do not measure the embedded SQLite default"
    )
    p.add_argument(
        "--listing-rows",
        type=_not_negative,
        help="submissions seeded in one form for the listing, search and export figures "
        "(default 1,000,000; --quick 20,000; 0 skips them)",
    )
    p.add_argument(
        "--listing-only",
        action="store_true",
        help="measure only the listing, search and export of a large form",
    )
    p.add_argument(
        "--dashboard-rows",
        type=_dashboard_rows,
        help="submissions seeded in one form for the dashboard's pages "
        "(default 100,000; --quick 5,000; at least 1,000; 0 skips them)",
    )
    p.add_argument(
        "--dashboard-only",
        action="store_true",
        help="measure only the dashboard's pages with a large form",
    )
    p.add_argument(
        "--embedded-only",
        action="store_true",
        help="measure only the embedded default's memory under load and intake form show",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="also sample the production worker with py-spy under load",
    )
    p.add_argument(
        "--profile-dir",
        type=Path,
        help="where the profile goes (default: a new temporary directory)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=Path("bench-results.json"),
        help="the JSON results (default bench-results.json)",
    )
    p.add_argument(
        "--database-url",
        default=os.environ.get("INTAKE_BENCH_DATABASE_URL") or None,
        help="a PostgreSQL server's admin URL; the bench makes and drops databases of "
        "its own there (INTAKE_BENCH_DATABASE_URL; default: a cluster of the bench's own,"
        " with pg_stat_statements)",
    )
    p.add_argument(
        "--redis-url",
        default=os.environ.get("INTAKE_BENCH_REDIS_URL") or None,
        help="the Redis database the bench's rate-limit windows go to; only its own keys"
        " are deleted (INTAKE_BENCH_REDIS_URL; default: a Redis server of the bench's own)",
    )
    p.add_argument(
        "--compare-ref",
        default=DEFAULT_COMPARE_REF,
        help="a git ref whose production is measured in the same rounds, for PostgreSQL's"
        f" CPU per submission (default {DEFAULT_COMPARE_REF}; 'none' skips it)",
    )
    return p


def parse(argv: Sequence[str] | None = None) -> Options:
    args = parser().parse_args(argv)
    quick: bool = args.quick

    def pick(given: float | None, full: float, short: float) -> float:
        return given if given is not None else (short if quick else full)

    return Options(
        duration=pick(args.duration, 30.0, 4.0),
        rounds=int(pick(args.rounds, 3, 2)),
        warmup=pick(args.warmup, 5.0, 1.0),
        connections=args.connections,
        threads=args.threads,
        prefill=int(pick(args.prefill, 1_000_000, 20_000)),
        production_submissions=int(pick(args.production_submissions, 100_000, 2_000)),
        storage_clients=args.connections,
        skip_embedded=args.skip_embedded,
        profile=args.profile,
        profile_dir=args.profile_dir,
        output=args.output,
        admin_url=args.database_url,
        redis_url=args.redis_url,
        quick=quick,
        listing_rows=int(pick(args.listing_rows, 1_000_000, 20_000)),
        listing_only=args.listing_only,
        dashboard_rows=int(pick(args.dashboard_rows, 100_000, 5_000)),
        dashboard_only=args.dashboard_only,
        embedded_only=args.embedded_only,
        compare_ref=None if args.compare_ref in ("", "none") else args.compare_ref,
        fixed_rate=None if args.fixed_rate is None else float(args.fixed_rate),
    )
