"""A form's retention, the cutting of full client addresses and the search of an erasure
on request, in PostgreSQL (SubmissionRepository.erase_expired, .truncate_client_ips,
.with_address)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from itertools import takewhile

from intake.adapters import autoresponse_rules as rules
from intake.adapters import sql_statements as sql
from intake.adapters.postgres import mapping
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.file_storage import ERASE_LOCK, ERASE_REST, erase_chosen
from intake.adapters.postgres.mapping import ROW_MAPPER
from intake.adapters.submission_pages import like_pattern
from intake.domain.model import Submission
from intake.domain.privacy import client_network_address
from intake.domain.triage import key_scopes
from intake.ports.submissions import ErasedBatch, TruncatedBatch

# One batch in one statement, as spam retention's (file_storage.py): the form's oldest
# submissions up to the cutoff, a range of submissions_form_created (0016), but for one
# whose event is still on its way; SKIP LOCKED, so two sweeps at once take each once.
# What goes with them is spam retention's, and their idempotency records.
_EXPIRED_HEAD = """
    WITH doomed AS (
        SELECT s.submission_id FROM submissions AS s
        WHERE s.form_id = %(form_id)s AND s.created_at <= %(cutoff)s
            AND NOT """
# Their idempotency records go too, sought among the form's scopes by the primary key
# (domain/triage.py's key_scopes): a retry after the erasure is a new submission.
_EXPIRED_KEYS = """
    keys AS (
        DELETE FROM idempotency AS i USING doomed
        WHERE i.submission_id = doomed.submission_id
            AND (i.scope = %(server_scope)s
                OR (i.scope >= %(public_from)s AND i.scope < %(public_to)s))
    ),"""
_ERASE_EXPIRED = _EXPIRED_HEAD + sql.EVENT_UNDER_WAY + ERASE_LOCK + _EXPIRED_KEYS + ERASE_REST
# The sweep's one row, locked for the batch: two sweeps at once take turns. Then the
# submissions after the last one it went through, along the primary key (ids sort by
# time); the creation times say where it stops.
_SWEPT_THROUGH = "SELECT swept_through FROM client_ip_sweep FOR UPDATE"
_AFTER = """
    SELECT submission_id, created_at, client_ip FROM submissions
    WHERE submission_id > %(after)s ORDER BY submission_id LIMIT %(limit)s
"""
# An address changed meanwhile (an erasure's NULL) is left as it now is.
_CUT = """
    UPDATE submissions AS s SET client_ip = v.network
    FROM unnest(%(ids)s::text[], %(stored)s::text[], %(networks)s::text[])
        AS v (submission_id, stored, network)
    WHERE s.submission_id = v.submission_id AND s.client_ip = v.stored
"""
# An upsert: an emptied table (tests do) starts again from the first submission.
_SWEPT = """
    INSERT INTO client_ip_sweep (only_row, swept_through) VALUES (true, %(last)s)
    ON CONFLICT (only_row) DO UPDATE SET swept_through = excluded.swept_through
"""
# The candidates: a bitmap of the reply-to index (0016) and the trigram index of the
# search text (0010), each spelling a LIKE of its own so that each is an index
# condition, then the workspace's rows among them. The search text is lowered by
# PostgreSQL, as the reply-to is here.
_CANDIDATES = (
    sql.SELECT_SUBMISSION + " WHERE workspace_id = %(workspace_id)s"
    " AND (lower(reply_to) = ANY (%(spellings)s::text[]) OR {terms})"
    " ORDER BY created_at, submission_id"
)
_TERM = "search_text LIKE lower(%(like{index})s) ESCAPE '\\'"


async def erase_expired(
    db: Database, form_id: str, created_before: datetime, limit: int
) -> ErasedBatch:
    server, (public_from, public_to) = key_scopes(form_id)
    params = {
        "form_id": form_id,
        "cutoff": mapping.moment(created_before),
        "limit": limit,
        "server_scope": server,
        "public_from": public_from,
        "public_to": public_to,
    }
    return await erase_chosen(db, _ERASE_EXPIRED, params)


async def truncate_client_ips(db: Database, created_before: datetime, limit: int) -> TruncatedBatch:
    """One batch, one transaction (SubmissionRepository.truncate_client_ips)."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    cutoff = mapping.moment(created_before)
    async with db.connection() as conn, conn.transaction():
        row = await (await conn.execute(_SWEPT_THROUGH)).fetchone()
        after = "" if row is None else row["swept_through"]
        cursor = await conn.execute(_AFTER, {"after": after, "limit": limit})
        due = list(takewhile(lambda r: r["created_at"] <= cutoff, await cursor.fetchall()))
        cut = [
            (r["submission_id"], r["client_ip"], client_network_address(r["client_ip"]))
            for r in due
            if r["client_ip"] is not None
        ]
        cut = [each for each in cut if each[2] != each[1]]
        truncated = 0
        if cut:
            ids, stored, networks = (list(column) for column in zip(*cut, strict=True))
            params = {"ids": ids, "stored": stored, "networks": networks}
            truncated = (await conn.execute(_CUT, params)).rowcount
        if due:
            await conn.execute(_SWEPT, {"last": due[-1]["submission_id"]})
    return TruncatedBatch(seen=len(due), truncated=truncated)


_FORGET_ADDRESS = sql.for_psycopg(rules.FORGET_ADDRESS)


async def forget_autoresponses(db: Database, workspace_id: str, address: str) -> int:
    """SubmissionRepository.forget_autoresponses."""
    return await db.execute(_FORGET_ADDRESS, (rules.address_hash(address), workspace_id))


async def with_address(
    db: Database, workspace_id: str, spellings: Collection[str]
) -> list[Submission]:
    wanted = [text.lower() for text in spellings]
    if not wanted:
        return []
    terms = " OR ".join(_TERM.format(index=index) for index in range(len(wanted)))
    params: dict[str, object] = {"workspace_id": workspace_id, "spellings": wanted}
    params.update({f"like{index}": like_pattern(text) for index, text in enumerate(wanted)})
    rows = await db.fetch_all(_CANDIDATES.format(terms=terms), params)
    return [ROW_MAPPER.submission_from_row(row) for row in rows]
