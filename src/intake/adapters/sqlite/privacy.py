"""A form's retention, the cutting of full client addresses and the search of an erasure
on request, in SQLite (SubmissionRepository.erase_expired, .truncate_client_ips,
.with_address). Functions run on the worker thread, as the repositories'."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from datetime import datetime
from itertools import takewhile

from intake.adapters import sql_statements as sql
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import SEARCH_TEXT_FUNCTION, transaction, truncate_wal
from intake.adapters.sqlite.file_storage import erase_chosen
from intake.adapters.sqlite.mapping import ROW_MAPPER
from intake.domain.model import Submission
from intake.domain.privacy import client_network_address
from intake.ports.submissions import ErasedBatch, TruncatedBatch

# The form's oldest submissions up to the cutoff, a range of submissions_form_created,
# but for one whose event is still on its way (as spam retention's).
_EXPIRED_HEAD = """
    SELECT s.submission_id, s.workspace_id, s.files FROM submissions AS s
    WHERE s.form_id = :form_id AND s.created_at <= :cutoff
        AND NOT """
_EXPIRED_TAIL = """
    ORDER BY s.created_at, s.submission_id LIMIT :limit
"""
_EXPIRED = _EXPIRED_HEAD + sql.EVENT_UNDER_WAY + _EXPIRED_TAIL
# The submissions after the last one the sweep went through, along the primary key (ids
# sort by time); the creation times say where the sweep stops.
_SWEPT_THROUGH = "SELECT swept_through FROM client_ip_sweep"
_AFTER = """
    SELECT submission_id, created_at, client_ip FROM submissions
    WHERE submission_id > ? ORDER BY submission_id LIMIT ?
"""
_CUT = "UPDATE submissions SET client_ip = ? WHERE submission_id = ?"
_SWEPT = """
    INSERT INTO client_ip_sweep (only_row, swept_through) VALUES (1, ?)
    ON CONFLICT (only_row) DO UPDATE SET swept_through = excluded.swept_through
"""
# The workspace's submissions, form by form through forms_workspace and
# submissions_form, whose reply-to or data text holds a spelling: a scan of the
# workspace, as SQLite's search is (docs/api.md, "Listing and search"). The data is
# JSON text written without escapes (ensure_ascii off), so a value's text is in it.
_CANDIDATES = (
    sql.SELECT_SUBMISSION  # noqa: S608 - constants only; the terms are placeholders
    + " WHERE form_id IN (SELECT form_id FROM forms WHERE workspace_id = ?)"
    " AND workspace_id = ? AND ({terms}) ORDER BY created_at, submission_id"
)
# SQLite's lower() folds ASCII only: a spelling beyond it is looked for in the search
# text (Python's lower, as the listing's search), which parses each row's JSON.
_ASCII_TERM = "lower(coalesce(reply_to, '')) = ? OR instr(lower(data), ?) > 0"
_TERM = f"lower(coalesce(reply_to, '')) = ? OR instr({SEARCH_TEXT_FUNCTION}(data), ?) > 0"


def erase_expired(
    conn: sqlite3.Connection, form_id: str, created_before: datetime, limit: int
) -> ErasedBatch:
    """One batch, one transaction (SubmissionRepository.erase_expired)."""
    params: dict[str, object] = {
        "form_id": form_id,
        "cutoff": mapping.time_text(created_before),
        "limit": limit,
    }
    return erase_chosen(conn, _EXPIRED, params, key_form=form_id)


def truncate_client_ips(
    conn: sqlite3.Connection, created_before: datetime, limit: int
) -> TruncatedBatch:
    """One batch, one transaction (SubmissionRepository.truncate_client_ips)."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    cutoff = mapping.time_text(created_before)  # text that sorts as the times it spells
    with transaction(conn):
        swept = conn.execute(_SWEPT_THROUGH).fetchone()
        after = "" if swept is None else swept["swept_through"]
        rows = conn.execute(_AFTER, (after, limit)).fetchall()
        due = list(takewhile(lambda row: row["created_at"] <= cutoff, rows))
        truncated = 0
        for row in due:
            stored = row["client_ip"]
            if stored is not None and client_network_address(stored) != stored:
                conn.execute(_CUT, (client_network_address(stored), row["submission_id"]))
                truncated += 1
        if due:
            conn.execute(_SWEPT, (due[-1]["submission_id"],))
    return TruncatedBatch(seen=len(due), truncated=truncated)


def forget_autoresponses(conn: sqlite3.Connection, workspace_id: str, address: str) -> int:
    """SubmissionRepository.forget_autoresponses; the log truncated after."""
    # Imported here: the autoresponder's rules load the mail modules, which a command
    # that never erases must not pay for at its start (tests/unit/test_command_imports).
    from intake.adapters import autoresponse_rules as rules  # noqa: PLC0415

    with transaction(conn):
        params = (rules.address_hash(address), workspace_id)
        forgotten = conn.execute(rules.FORGET_ADDRESS, params).rowcount
    if forgotten:
        truncate_wal(conn)
    return forgotten


def with_address(
    conn: sqlite3.Connection, workspace_id: str, spellings: Collection[str]
) -> list[Submission]:
    wanted = [text.lower() for text in spellings]
    if not wanted:
        return []
    terms = [_ASCII_TERM if text.isascii() else _TERM for text in wanted]
    query = _CANDIDATES.format(terms=" OR ".join(terms))
    params: list[object] = [workspace_id, workspace_id]
    for text in wanted:
        params += [text, text]
    rows = conn.execute(query, params).fetchall()
    return [ROW_MAPPER.submission_from_row(row) for row in rows]
