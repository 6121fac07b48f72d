"""Migrated PostgreSQL databases made by copying one: each test process migrates a
template database once, and a test that wants a database at the latest schema gets a
copy of it (`CREATE DATABASE ... TEMPLATE`), a fraction of a second where migrating
takes seconds on a busy server. The templates are dropped when the process ends.
"""

from __future__ import annotations

import secrets

_TEMPLATES: dict[str, str] = {}  # the server's admin URL: this process's template on it


def create_migrated_database(admin: str) -> str:
    """A new database on the server at the latest schema, and nothing in it; its name."""
    # The driver is imported only by the tests that use PostgreSQL.
    import psycopg
    from psycopg import sql

    template = _TEMPLATES.get(admin) or _make_template(admin)
    name = f"intake_test_{secrets.token_hex(6)}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(template)
            )
        )
    return name


def _make_template(admin: str) -> str:
    import psycopg
    from psycopg import sql

    # Imported here: they import the suites' shared setup, which imports this module.
    from tests.contract.conftest import create_database, database_url, drop_database
    from tests.support.processes import clean_env, run_cli

    name = create_database(admin)
    try:
        run_cli(clean_env(INTAKE_DATABASE_URL=database_url(admin, name)), "migrate")
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            # A copy needs its template to have no sessions: none may start from now on,
            # and those of the migration, which the server may still be closing, end.
            conn.execute(
                sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS false").format(
                    sql.Identifier(name)
                )
            )
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                [name],
            )
    except BaseException:
        drop_database(admin, name)
        raise
    _TEMPLATES[admin] = name
    return name


def drop_templates() -> None:
    """Drops the templates this process made."""
    from tests.contract.conftest import drop_database

    while _TEMPLATES:
        admin, name = _TEMPLATES.popitem()
        drop_database(admin, name)
