"""Group commit: the commits that queue up in one worker go to PostgreSQL together, in
one statement, each with its own result (adapters/coalescing.py gathers them).

One statement is one transaction: a batch commits whole or not at all, and a failure
fails each of its commits with the same StorageUnavailable. Within it, the commits run
one after another, each seeing what those before it wrote (a second use of a key is
answered `idempotency_taken`, as if it came later). A transaction of commits that carry
no idempotency key, no file and no exact count (`plain`: a form's usual traffic) goes
to intake_commit_many instead, which runs each of intake_commit's steps once for them
all, a statement a step rather than a statement a step and a commit, and answers each
as intake_commit would.

Two rules keep the guarantees of intake_commit (migrations/README.md names its file):

- **Lock order.** A batch takes the locks of its commits (a workspace's quota rows and
  storage row, idempotency keys) and holds them to its end. Its commits go in the order
  of their workspace, then key, so that two batches lock alike and do not wait on each
  other in a circle. (A key written by two batches at once, beside a file's storage
  count, can still deadlock: PostgreSQL breaks it, and its commits go again one by one.)
- **Exact quota.** A commit counting beside others assumes each other transaction holds
  at most one uncommitted count (repeatable/intake_commit.sql). A transaction here holds
  up to PER_WORKSPACE counts of one workspace's month, so the ceiling it is given is
  lowered by what the other 31 could hold beyond one each; a workspace too near its
  ceiling for that counts exactly, every commit of it in the batch alike (mixing the two
  ways in one transaction could deadlock). The whole workspace's commits beyond PER_WORKSPACE go in
  another transaction, sent at the same time.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence

from psycopg import errors
from psycopg.rows import DictRow

from intake.adapters.postgres.database import Database
from intake.adapters.sql_rows import Params
from intake.domain.errors import StorageUnavailable

# The rows a month's count is spread over: c_shards in intake_commit.
SHARDS = 32
# The most counts of one workspace's month in one transaction. A transaction's own cost
# (its flush, intake_commit_many's statements) is shared by up to this many commits; the
# price of more is counting exactly within RESERVE + SHARDS of a ceiling.
PER_WORKSPACE = 16
# What the other transactions may hold uncommitted beyond the one each that the
# function's own margin allows for.
RESERVE = (SHARDS - 1) * (PER_WORKSPACE - 1)

# intake_commit's arguments (p_<name>), each with the type its one signature declares.
ARGUMENTS = (
    ("submission_id", "text"),
    ("form_id", "text"),
    ("workspace_id", "text"),
    ("status", "text"),
    ("data", "json"),
    ("subject", "text"),
    ("reply_to", "text"),
    ("spam_score", "double precision"),
    ("client_ip", "text"),
    ("created_at", "timestamptz"),
    ("event_id", "text"),
    ("event_type", "text"),
    ("event_submission_id", "text"),
    ("event_form_id", "text"),
    ("event_workspace_id", "text"),
    ("payload", "json"),
    ("event_created_at", "timestamptz"),
    ("idem_scope", "text"),
    ("idem_key", "text"),
    ("idem_fingerprint", "text"),
    ("idem_submission_id", "text"),
    ("idem_created_at", "timestamptz"),
    ("idem_expired_at", "timestamptz"),
    ("quota_workspace_id", "text"),
    ("quota_period", "text"),
    ("quota_ceiling", "bigint"),
    ("check_form_id", "text"),
    ("check_public_key", "text"),
    ("quota_exact", "boolean"),
    ("files", "jsonb"),
    ("storage_bytes", "bigint"),
    ("storage_ceiling", "bigint"),
    ("spam_reasons", "text"),
    ("search_text", "text"),
)
_OUT = "outcome, held_fingerprint, held_submission_id, held_created_at"


def _call(value: str) -> str:
    """intake_commit(...) with each argument named and cast; `value` makes the value's
    SQL from the name."""
    named = ",\n        ".join(
        f"p_{name} => {value.format(name=name)}::{kind}" for name, kind in ARGUMENTS
    )
    return f"intake_commit(\n        {named}\n    )"


_FROM_ARRAY = "(a.p ->> '{name}')"
# One commit. Explicit casts pick the function's one signature whatever types the driver
# sends (an int may go as smallint, a None as unknown).
SINGLE = f"SELECT {_OUT} FROM {_call('%({name})s')}"  # noqa: S608 - constants only
# Many: a JSON array of the commits' arguments, every value as its text (or null), cast
# as the single one casts it; the commits run, and answer, in the array's order.
BATCH = (
    f"SELECT r.outcome, r.held_fingerprint, r.held_submission_id, r.held_created_at"  # noqa: S608
    f" FROM jsonb_array_elements(%s::jsonb) WITH ORDINALITY AS a(p, i)"
    f" CROSS JOIN LATERAL {_call(_FROM_ARRAY)} AS r"
    f" ORDER BY a.i"
)
# Many commits none of which needs intake_commit's steps one by one (`plain`): the same
# array to intake_commit_many, which runs a statement a step for the whole group.
MANY = (
    f"SELECT r.{_OUT.replace(', ', ', r.')}"  # noqa: S608 - constants only
    f" FROM intake_commit_many(%s::jsonb) WITH ORDINALITY AS r({_OUT}, i)"
    " ORDER BY r.i"
)

Answer = DictRow | StorageUnavailable


async def commit_all(db: Database, batch: Sequence[Params]) -> list[Answer]:
    """Each commit's row, in the batch's order, or the error of its transaction."""
    answers: list[Answer | None] = [None] * len(batch)

    async def commit_chunk(chunk: list[int]) -> None:
        for index, answer in zip(chunk, await _commit_chunk(db, batch, chunk), strict=True):
            answers[index] = answer

    await asyncio.gather(*(commit_chunk(chunk) for chunk in chunks(batch)))
    return [answer for answer in answers if answer is not None]


def chunks(batch: Sequence[Params]) -> list[list[int]]:
    """The batch's indexes in transactions of at most PER_WORKSPACE commits of a
    workspace's month, a submission id at most once in each; each in lock order."""
    made: list[_Chunk] = []
    for index, params in enumerate(batch):
        chunk = next((chunk for chunk in made if chunk.takes(params)), None)
        if chunk is None:
            chunk = _Chunk()
            made.append(chunk)
        chunk.add(index, params)
    return [sorted(chunk.indexes, key=lambda i: _lock_order(batch[i])) for chunk in made]


class _Chunk:
    def __init__(self) -> None:
        self.indexes: list[int] = []
        self._months: dict[tuple[object, object], int] = {}
        self._submission_ids: set[object] = set()

    def takes(self, params: Params) -> bool:
        return (
            self._months.get(_month(params), 0) < PER_WORKSPACE
            and params["submission_id"] not in self._submission_ids
        )

    def add(self, index: int, params: Params) -> None:
        self.indexes.append(index)
        self._months[_month(params)] = self._months.get(_month(params), 0) + 1
        self._submission_ids.add(params["submission_id"])


def _month(params: Params) -> tuple[object, object]:
    return (params["quota_workspace_id"], params["quota_period"])


def _lock_order(params: Params) -> tuple[str, str, str, str]:
    # sorted() is stable: one key's commits keep the order they came in.
    return (
        str(params["workspace_id"]),
        str(params["quota_period"] or ""),
        str(params["idem_scope"] or ""),
        str(params["idem_key"] or ""),
    )


async def _commit_chunk(db: Database, batch: Sequence[Params], chunk: list[int]) -> list[Answer]:
    items = counted(batch[i] for i in chunk)
    try:
        return list(await send(db, items))
    except StorageUnavailable as error:
        if not isinstance(error.__cause__, errors.DeadlockDetected) or len(items) == 1:
            return [error] * len(items)
        return [await _alone(db, item) for item in items]  # nothing was written: again


async def send(db: Database, items: Sequence[Params]) -> list[DictRow]:
    """One transaction: `items` (counted, in lock order) committed in their order."""
    if len(items) == 1:
        return [await _one(db, items[0])]
    statement = MANY if all(plain(p) for p in items) else BATCH
    rows = await db.fetch_all(statement, (as_json(items),))
    if len(rows) != len(items):
        raise RuntimeError(f"a batch of {len(items)} commits answered {len(rows)} rows")
    return rows


def plain(params: Params) -> bool:
    """Whether a commit carries no idempotency key, no file's bytes and no exact quota,
    the steps intake_commit_many leaves to intake_commit."""
    return (
        params["idem_scope"] is None and not params["storage_bytes"] and not params["quota_exact"]
    )


async def _one(db: Database, params: Params) -> DictRow:
    row = await db.fetch_one(SINGLE, params)
    if row is None:
        raise RuntimeError("intake_commit answered no row")  # a bug, not an outage
    return row


async def _alone(db: Database, params: Params) -> Answer:
    try:
        return await _one(db, params)
    except StorageUnavailable as error:
        return error


def counted(chunk: Iterable[Params]) -> list[Params]:
    """The chunk's arguments with the way each counts its quota: beside others under a
    ceiling lowered by RESERVE, or exactly, all of a workspace's month alike. A commit
    that changes is a copy: its own arguments stay as made, for a commit again alone."""
    items = list(chunk)
    # Under the lowered ceiling, a count beside others could never pass.
    exact = {_month(p) for p in items if (c := _ceiling(p)) is not None and c - RESERVE < SHARDS}
    return [_counted(p, exact) for p in items]


def _counted(params: Params, exact: set[tuple[object, object]]) -> Params:
    ceiling = _ceiling(params)
    if ceiling is None:
        return params
    if _month(params) in exact:
        return {**params, "quota_exact": True}
    if params["quota_exact"]:
        return params
    return {**params, "quota_ceiling": ceiling - RESERVE}


def _ceiling(params: Params) -> int | None:
    ceiling = params["quota_ceiling"]
    return None if ceiling is None else int(str(ceiling))


# Compact, and Unicode as is: the arguments' texts are checked for NUL, and the domain
# refuses lone surrogates.
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def as_json(items: Sequence[Params]) -> str:
    """The array BATCH and MANY read: each commit's arguments by name, as JSON holds
    them (mapping.commit_params makes them so)."""
    return _JSON.encode(list(items))
