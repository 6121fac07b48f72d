"""The schema a fresh `intake migrate` builds on PostgreSQL, held against a snapshot of
the catalog: the migrations, once released, are never edited, so what they build
changes only with a new migration (and then the snapshot with it, in the same change).

To write the snapshot again after adding a migration, on a freshly migrated database:
    .venv/bin/python -c "import sys; from tests.contract.test_postgres_schema import
    catalog; sys.stdout.write(catalog(sys.argv[1]))" postgresql://.../db > SNAPSHOT
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from intake.adapters.postgres import open_postgres_store
from tests.contract.conftest import create_database, database_url, drop_database

pytestmark = [pytest.mark.anyio, pytest.mark.services]

SNAPSHOT = Path(__file__).with_name("postgres_schema.txt")

# Each query lists one kind of object of the public schema, one text per row, in an
# order of their own: the catalog's definitions, as pg_dump would print them.
_CATALOG_QUERIES = {
    "relation": """
        SELECT c.relname || ' ' || c.relkind::text || ' ' || coalesce(c.reloptions::text, '')
        FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'p', 'S')
        ORDER BY 1
    """,
    "column": """
        SELECT c.relname || '.' || a.attname || ' #' || a.attnum || ' '
            || format_type(a.atttypid, a.atttypmod)
            || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
            || coalesce(' COLLATE ' || quote_ident(co.collname), '')
            || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')
        FROM pg_attribute AS a
        JOIN pg_class AS c ON c.oid = a.attrelid
        JOIN pg_namespace AS n ON n.oid = c.relnamespace
        LEFT JOIN pg_collation AS co ON co.oid = a.attcollation AND co.collname <> 'default'
        LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'p')
            AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY c.relname, a.attnum
    """,
    "constraint": """
        SELECT c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
        FROM pg_constraint AS k
        JOIN pg_class AS c ON c.oid = k.conrelid
        JOIN pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public'
        ORDER BY 1
    """,
    "index": "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname",
    "view": """
        SELECT viewname || ' AS' || definition FROM pg_views
        WHERE schemaname = 'public' ORDER BY viewname
    """,
    "function": """
        SELECT pg_get_functiondef(p.oid)
        FROM pg_proc AS p JOIN pg_namespace AS n ON n.oid = p.pronamespace
        WHERE n.nspname = 'public'
        ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)
    """,
    "trigger": """
        SELECT pg_get_triggerdef(t.oid)
        FROM pg_trigger AS t
        JOIN pg_class AS c ON c.oid = t.tgrelid
        JOIN pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND NOT t.tgisinternal
        ORDER BY t.tgname
    """,
}


def catalog(url: str) -> str:
    """The public schema of the database at `url`, as text: one block per object."""
    blocks: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn:
        for kind, text in _CATALOG_QUERIES.items():
            for (definition,) in conn.execute(text).fetchall():
                blocks.append(f"-- {kind}\n{str(definition).rstrip()}\n")
    return "\n".join(blocks)


@pytest.fixture
def fresh_url(postgres_admin_url: str) -> Iterator[str]:
    """A database of its own: the public schema, as `intake migrate` finds it."""
    name = create_database(postgres_admin_url)
    try:
        yield database_url(postgres_admin_url, name)
    finally:
        drop_database(postgres_admin_url, name)


async def test_a_fresh_migrate_builds_the_schema_of_the_snapshot(fresh_url: str) -> None:
    store = await open_postgres_store(fresh_url)
    try:
        await store.migrate()
    finally:
        await store.close()

    assert catalog(fresh_url) == SNAPSHOT.read_text(encoding="utf-8")
