"""What a repository of this package sends its statements through: one store's
connection (SQLite's worker thread, PostgreSQL's pool), seen alike.

Statements are written once, in sqlite3's placeholder styles (`?` and `:name`,
sql_statements.py); the PostgreSQL executor renders them for psycopg. Rows are read by
column name and turned into domain objects by the executor's `rows`, which knows how its
store holds a time, a boolean and JSON (sql_rows.py).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Concatenate, ParamSpec, Protocol, TypeAlias, TypeVar

from intake.adapters.sql_rows import Row, RowMapper

# `?` placeholders take a sequence, `:name` ones a mapping.
Params: TypeAlias = Mapping[str, object] | Sequence[object]
P = ParamSpec("P")
T = TypeVar("T")


class Statements(Protocol):
    """Runs statements, alone or inside a transaction."""

    @property
    def rows(self) -> RowMapper:
        """Rows to domain objects and back, as this store holds them."""
        ...

    @property
    def locks_rows(self) -> bool:
        """True on PostgreSQL, whose transactions see others' commits as they happen: a
        transaction that must keep what it read first takes row locks (`FOR UPDATE`).
        False on SQLite, whose transaction holds the database's one write lock from its
        start (BEGIN IMMEDIATE), so that nothing it reads can change under it."""
        ...

    async def fetch_one(self, statement: str, params: Params = ()) -> Row | None:
        """The first row the statement answers, or None."""
        ...

    async def fetch_all(self, statement: str, params: Params = ()) -> Sequence[Row]:
        """Every row the statement answers, in its order."""
        ...

    async def execute(self, statement: str, params: Params = ()) -> int:
        """Runs one statement; the number of rows it inserted, changed or deleted."""
        ...

    async def execute_many(self, statement: str, batch: Iterable[Params]) -> int:
        """Runs one statement once per set of parameters, in one hop to the database (a
        pipeline on PostgreSQL); the number of rows they changed in all. Together only
        inside a transaction, as any two statements."""
        ...


class Transaction(Statements, Protocol):
    def discard(self) -> None:
        """Ends the transaction with a rollback, without an error, once its steps end."""
        ...


class Executor(Statements, Protocol):
    async def transaction(
        self,
        steps: Callable[Concatenate[Transaction, P], Coroutine[object, None, T]],
        /,
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Runs `steps(tx, *args, **kwargs)` as one transaction and answers what they
        return: the statements sent through `tx` are committed together when the steps
        end, or none of them: an exception or a `discard()` rolls them back.

        The steps await `tx`'s statements and nothing else: SQLite runs them on its
        worker thread, in one hop, each statement as it is called. A caller cancelled
        there stops waiting: steps that had not begun never run, begun ones run to their
        end. Statements sent through the executor itself are not part of the
        transaction (on SQLite, from inside the steps, they fail)."""
        ...

    async def forget_erased(self) -> None:
        """After an erasure has committed: no earlier copy of what it erased stays in the
        store's own files. SQLite cuts its write-ahead log (connection.truncate_wal);
        PostgreSQL's log is the server's, kept as its operator says: nothing to do."""
        ...
