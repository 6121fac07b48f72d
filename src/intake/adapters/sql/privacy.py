"""The cutting of full client addresses, the search of an erasure on request and the
forgetting of an address by the autoresponder (SubmissionRepository.truncate_client_ips,
.with_address, .forget_autoresponses). A form's retention erases as spam retention does,
in erasures.py."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from itertools import takewhile
from typing import Protocol

from intake.adapters.sql.executor import Executor, Params, Transaction
from intake.adapters.sql_rows import Row
from intake.domain.model import Submission
from intake.domain.privacy import client_network_address
from intake.ports.submissions import TruncatedBatch

# The sweep's one row (locked for the batch on PostgreSQL: two sweeps at once take
# turns). Then the submissions after the last one it went through, along the primary key
# (ids sort by time); the creation times say where it stops.
_SWEPT_THROUGH = "SELECT swept_through FROM client_ip_sweep"
_AFTER = """
    SELECT submission_id, created_at, client_ip FROM submissions
    WHERE submission_id > ? ORDER BY submission_id LIMIT ?
"""
# An address changed meanwhile (an erasure's NULL) is left as it now is.
_CUT = """
    UPDATE submissions SET client_ip = :network
    WHERE submission_id = :id AND client_ip = :stored
"""
# An upsert: an emptied table (tests do) starts again from the first submission.
_SWEPT = """
    INSERT INTO client_ip_sweep (only_row, swept_through) VALUES (:only_row, :last)
    ON CONFLICT (only_row) DO UPDATE SET swept_through = excluded.swept_through
"""


class AddressSearch(Protocol):
    """The statement that finds a workspace's submissions whose reply-to is one of the
    spellings (lowered), or whose data holds one, in the order they were made: each
    store searches its own way (sqlite/dialect.py, postgres/dialect.py)."""

    def __call__(self, workspace_id: str, spellings: Sequence[str]) -> tuple[str, Params]: ...


class SqlPrivacy:
    def __init__(self, ex: Executor, address_search: AddressSearch) -> None:
        self._ex = ex
        self._address_search = address_search

    async def truncate_client_ips(self, created_before: datetime, limit: int) -> TruncatedBatch:
        """One batch, one transaction."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        return await self._ex.transaction(_truncate, created_before, limit)

    async def with_address(self, workspace_id: str, spellings: Collection[str]) -> list[Submission]:
        wanted = [text.lower() for text in spellings]
        if not wanted:
            return []
        found = await self._ex.fetch_all(*self._address_search(workspace_id, wanted))
        return [self._ex.rows.submission_from_row(row) for row in found]

    async def forget_autoresponses(self, workspace_id: str, address: str) -> int:
        # Imported here: the autoresponder's rules load the mail modules, which a command
        # that never erases must not pay for at its start (tests/unit/test_command_imports).
        from intake.adapters import autoresponse_rules as rules  # noqa: PLC0415

        params = (rules.address_hash(address), workspace_id)
        forgotten = await self._ex.execute(rules.FORGET_ADDRESS, params)
        if forgotten:
            await self._ex.forget_erased()
        return forgotten


async def _truncate(tx: Transaction, created_before: datetime, limit: int) -> TruncatedBatch:
    codec = tx.rows.codec
    lock = " FOR UPDATE" if tx.locks_rows else ""
    swept = await tx.fetch_one(_SWEPT_THROUGH + lock)
    after = "" if swept is None else swept["swept_through"]
    found = await tx.fetch_all(_AFTER, (after, limit))
    due = list(takewhile(lambda r: codec.read_time(r["created_at"]) <= created_before, found))
    truncated = await tx.execute_many(_CUT, _cuts(due))
    if due:
        last = {"only_row": codec.boolean(True), "last": due[-1]["submission_id"]}
        await tx.execute(_SWEPT, last)
    return TruncatedBatch(seen=len(due), truncated=truncated)


def _cuts(due: Sequence[Row]) -> list[Params]:
    """The full addresses among `due`, each with its network."""
    cuts: list[Params] = []
    for row in due:
        stored = row["client_ip"]
        if stored is not None and (network := client_network_address(stored)) != stored:
            cuts.append({"id": row["submission_id"], "stored": stored, "network": network})
    return cuts
