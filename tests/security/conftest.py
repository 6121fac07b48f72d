"""The security suite drives the same harnesses as the HTTP and command line suites: the
real app on each backend (tests/http/conftest.py) and the `intake` command on a SQLite
file beside the app (tests/cli/conftest.py). Their fixtures are brought in here, with the
hook that gives `backend` its parameters (SQLite, and PostgreSQL for the smoke set)."""

from __future__ import annotations

from tests.cli.conftest import cli, database_url, http  # noqa: F401
from tests.contract.conftest import sqlite_template  # noqa: F401
from tests.http.conftest import (  # noqa: F401
    backend,
    make_service,
    postgres_url,
    pytest_generate_tests,
    seeded,
    svc,
)
