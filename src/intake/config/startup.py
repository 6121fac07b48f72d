"""What a process says of its configuration as it starts: the store and the Redis it
uses, never with a password, and the INTAKE_* variables it does not know. A misspelled
variable is otherwise silent: its setting keeps its default (for the database, a SQLite
file under the current folder), and every command still answers."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from urllib.parse import unquote, urlsplit

from attrs import frozen

from intake.adapters.sqlite.connection import MEMORY, absolute_path, database_path
from intake.config.variables import VARIABLES

PREFIX = "INTAKE_"
# INTAKE_* names read by something other than the service, which no misspelled setting
# is: the test suite's and the benchmark's (by prefix), and those that the docs'
# examples of client programs read (an API key, the service's address, a form id).
OTHER_PREFIXES = ("INTAKE_TEST_", "INTAKE_BENCH_")
OTHER_NAMES = frozenset(
    {
        "INTAKE_REQUIRE_SERVICES",
        "INTAKE_DOCS_SCREENSHOTS",
        "INTAKE_URL",
        "INTAKE_FORM_ID",
        "INTAKE_API_KEY",
        "INTAKE_READ_KEY",
        "INTAKE_KEY",
    }
)
_MASK = "***"


@frozen
class UnknownVariable:
    name: str
    suggestion: str | None  # the setting it most likely means, if one is close

    def message(self) -> str:
        said = f"{self.name} is not a variable intake reads: it is ignored"
        if self.suggestion is None:
            return f"{said} (docs/configuration.md lists them)"
        return f"{said}; did you mean {self.suggestion}?"


def unknown_variables(env: Mapping[str, str]) -> list[UnknownVariable]:
    """The INTAKE_* names in `env` that are neither a setting nor another tool's, each
    with the setting it is closest to."""
    settings = [variable.name for variable in VARIABLES]
    known = set(settings) | OTHER_NAMES
    return [
        UnknownVariable(name, _closest(name, settings))
        for name in sorted(env)
        if name.startswith(PREFIX) and name not in known and not name.startswith(OTHER_PREFIXES)
    ]


def _closest(name: str, candidates: Iterable[str]) -> str | None:
    # Compared without the prefix they all share, which would make any two look alike.
    bare = {candidate.removeprefix(PREFIX): candidate for candidate in candidates}
    found = difflib.get_close_matches(name.removeprefix(PREFIX), list(bare), n=1, cutoff=0.6)
    return bare[found[0]] if found else None


def store_description(database_url: str) -> str:
    """`SQLite at /absolute/path.db`, or `PostgreSQL at user:***@host:5432/db`."""
    if database_url.startswith("sqlite:"):
        try:
            path = database_path(database_url)
        except ValueError:
            return "SQLite, at a URL it cannot use"
        if path == MEMORY:
            return "SQLite in memory (nothing is kept)"
        return f"SQLite at {absolute_path(path)}"
    if database_url.startswith(("postgresql:", "postgres:")):
        return f"PostgreSQL at {_server(database_url, default_port=5432)}"
    return f"an unsupported database ({database_url.partition(':')[0]!r})"


def redis_description(redis_url: str | None) -> str:
    """`Redis at :***@host:6379/0`, or where the rate-limit windows are without one."""
    if redis_url is None:
        return "no Redis: each process keeps its own rate-limit windows"
    if redis_url.startswith("unix:"):
        return f"Redis on the socket {urlsplit(redis_url).path}"
    return f"Redis at {_server(redis_url, default_port=6379)}"


def _server(url: str, *, default_port: int) -> str:
    """`user:***@host:port/path`: the URL's user, host, port and path, its password
    masked, and nothing of its query (which may carry a password too)."""
    parts = urlsplit(url)
    try:
        port = parts.port or default_port
    except ValueError:
        return "a URL it cannot use"
    user = unquote(parts.username) if parts.username else ""
    if parts.password is not None:
        user = f"{user}:{_MASK}"
    host = parts.hostname or "localhost"
    if ":" in host:
        host = f"[{host}]"
    return f"{user}@{host}:{port}{parts.path}" if user else f"{host}:{port}{parts.path}"
