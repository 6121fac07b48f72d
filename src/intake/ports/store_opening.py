"""How a process opens its store: what it may make, and what it must find there."""

from __future__ import annotations

from enum import Enum

from intake.domain.errors import StorageUnavailable

MIGRATE_HINT = "run `intake migrate`"


class StoreOpening(Enum):
    """What the command or process opening the store needs of it.

    PREPARE: `intake migrate`, and `intake serve` before its workers start: the database
    may be made (a SQLite file and its folder) and its schema brought up to date.
    SERVE: a serving worker: as PREPARE, but a PostgreSQL server that cannot be reached
    yet leaves the process up, not ready (503s), until it answers.
    WRITE: the commands that change things: the embedded SQLite store prepares itself, as
    PREPARE; a PostgreSQL database must have been migrated.
    READ: the commands that only read: the database must exist and be migrated; nothing
    is made, on disk or in the database."""

    PREPARE = "prepare"
    SERVE = "serve"
    WRITE = "write"
    READ = "read"


class StoreNotPrepared(StorageUnavailable):
    """The database does not exist, or its schema is behind this intake's: `intake
    migrate` prepares it. The message says which, and how."""
