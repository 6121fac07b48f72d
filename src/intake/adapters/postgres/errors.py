"""Driver errors become the domain's one storage error here, and nowhere else."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import errors
from psycopg_pool import PoolClosed, PoolTimeout, TooManyRequests

from intake.domain.errors import StorageUnavailable

MIGRATE_HINT = "run `intake migrate`"

# What an out-of-date or empty database answers: a deployment step was missed.
_SCHEMA_MISSING = (errors.UndefinedTable, errors.UndefinedColumn, errors.UndefinedFunction)


@contextmanager
def map_postgres_errors() -> Iterator[None]:
    """A lost connection, a shut-down server, a serialization failure or deadlock, no free
    connection in the pool, a broken constraint: the request cannot be served now, and
    that is all the service needs to know (as the SQLite adapter, every DatabaseError).
    The driver's error stays chained for the log. psycopg.InterfaceError (the driver
    misused) is a bug in the adapter, not a storage condition, so it is left alone.

    The transaction is already gone when the error gets here: an autocommit statement
    dies with its error, a `conn.transaction()` block rolls back on the way out, and a
    broken connection takes its open transaction with it on the server."""
    try:
        yield
    except PoolTimeout as error:
        # Every connection is busy: answer 503 now rather than queue without end.
        raise StorageUnavailable(f"postgres: no free connection: {error}") from error
    except TooManyRequests as error:
        raise StorageUnavailable(f"postgres: too many waiting for a connection: {error}") from error
    except PoolClosed as error:
        raise StorageUnavailable("postgres: the store is closed") from error
    except _SCHEMA_MISSING as error:
        raise StorageUnavailable(
            f"postgres: the database schema is missing or out of date ({MIGRATE_HINT}): {error}"
        ) from error
    except psycopg.DatabaseError as error:
        raise StorageUnavailable(f"postgres: {error}") from error
