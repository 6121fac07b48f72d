"""The PostgreSQL adapter: every repository of the Store port over a pool of psycopg 3
async connections. The schema is applied by `intake migrate`, never on open."""

from intake.adapters.postgres.store import PostgresStore, open_postgres_store

__all__ = ["PostgresStore", "open_postgres_store"]
