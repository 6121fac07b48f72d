"""The SQL of session notes (NoteRepository) that SQLite and PostgreSQL send alike,
written as SQLite takes it; PostgreSQL's module renders it for psycopg."""

from __future__ import annotations

from intake.domain.sealing import SealedPlace

# Notes expire in minutes: those never read go as any note is kept.
DROP_EXPIRED = "DELETE FROM session_notes WHERE expires_at <= ?"
KEEP = """
    INSERT INTO session_notes (session_id, note, expires_at) VALUES (?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET note = excluded.note, expires_at = excluded.expires_at
"""
# Read and deleted in one statement: two pages at once cannot both have it.
TAKE = "DELETE FROM session_notes WHERE session_id = ? RETURNING note, expires_at"


def note_place(session_id: str) -> SealedPlace:
    """Where a note is sealed for. Not among the columns `intake secrets rotate` seals
    again: a note lives minutes, and one a rotation leaves unopenable is not shown."""
    return SealedPlace("session_notes", "note", session_id)
