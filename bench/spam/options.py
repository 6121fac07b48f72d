"""`python -m bench.spam` options."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from attrs import frozen

from bench.spam.corpus import SHUFFLE_SEED

DEFAULT_CACHE = Path("~/.cache/intake-bench/spam")
# A busy form's day: the corpus spans about a month of simulated time.
DEFAULT_PER_DAY = 200


@frozen
class Options:
    cache: Path
    limit: int | None
    per_day: int
    seed: int


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.spam",
        description="intake's learning spam filter against bogofilter, online over the "
        "SpamAssassin public corpus (docs/scoring.md, 'Measured').",
    )
    p.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"where the corpus is kept, outside the repository (default {DEFAULT_CACHE})",
    )
    p.add_argument(
        "--limit", type=_positive, help="only the first N mails of the order (a quick try)"
    )
    p.add_argument(
        "--per-day",
        type=_positive,
        default=DEFAULT_PER_DAY,
        help=f"submissions a simulated day (default {DEFAULT_PER_DAY})",
    )
    p.add_argument("--seed", type=int, default=SHUFFLE_SEED, help="the order's shuffle seed")
    return p


def parse(argv: Sequence[str] | None = None) -> Options:
    args = parser().parse_args(argv)
    return Options(
        cache=args.cache.expanduser(),
        limit=args.limit,
        per_day=args.per_day,
        seed=args.seed,
    )
