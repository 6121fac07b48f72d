"""Migration 0012 (SQLite) makes `deliveries` anew to let a delivery go to a chat
destination: every delivery and every attempt of a database it finds is kept, ids and
all, and the foreign key from attempts to deliveries still cascades."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from intake.adapters.sqlite.migrations import migrate
from tests.contract.old_schemas import sqlite_before, sqlite_workspace

_FORM = (
    "INSERT INTO forms (form_id, workspace_id, public_form_key, name, mode, enabled,"
    " allowed_origins, rules, spam_threshold)"
    " VALUES ('frm_1', 'ws_1', 'pk', 'Old', 'public', 1, '[]', '[]', 5.0)"
)
_EVENT = (
    "INSERT INTO outbox (event_id, event_type, submission_id, form_id, workspace_id, payload,"
    " created_at, next_attempt_at) VALUES ('evt_1', 'submission.created', 'sub_1', 'frm_1',"
    " 'ws_1', '{}', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')"
)
_DELIVERY = (
    "INSERT INTO deliveries (delivery_id, event_id, kind, destination_id, state, attempts,"
    " next_attempt_at, created_at) VALUES (?, 'evt_1', 'webhook', ?, 'pending', 2,"
    " '2026-01-01T00:10:00Z', '2026-01-01T00:00:00Z')"
)
_ATTEMPT = (
    "INSERT INTO delivery_attempts (delivery_id, attempted_at, outcome, status_code, error)"
    " VALUES (?, '2026-01-01T00:00:00Z', 'failed', 500, 'HTTP 500')"
)


@pytest.fixture
def old_file(tmp_path: Path) -> Path:
    path = tmp_path / "intake.db"
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        sqlite_before(conn, "0012_chat_destinations")
        sqlite_workspace(conn, "ws_1")
        conn.execute(_FORM)
        conn.execute(_EVENT)
        for n in (1, 2):
            conn.execute(_DELIVERY, (f"dlv_{n}", f"wh_{n}"))
            conn.execute(_ATTEMPT, (f"dlv_{n}",))
            conn.execute(_ATTEMPT, (f"dlv_{n}",))
    return path


def test_deliveries_and_attempts_are_kept_and_chat_is_a_kind(old_file: Path) -> None:
    with closing(sqlite3.connect(old_file, isolation_level=None)) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        before = conn.execute("SELECT * FROM delivery_attempts ORDER BY attempt_id").fetchall()

        applied = migrate(conn)

        assert applied[0] == "0012_chat_destinations"
        after = conn.execute("SELECT * FROM delivery_attempts ORDER BY attempt_id").fetchall()
        assert after == before
        assert conn.execute("SELECT count(*) FROM deliveries").fetchone() == (2,)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute(
            "INSERT INTO deliveries (delivery_id, event_id, kind, destination_id, state,"
            " attempts, next_attempt_at, created_at) VALUES ('dlv_3', 'evt_1', 'chat',"
            " 'chat_1', 'pending', 0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')"
        )
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("UPDATE deliveries SET kind = 'fax' WHERE delivery_id = 'dlv_3'")
        conn.execute("DELETE FROM deliveries WHERE delivery_id = 'dlv_1'")
        left = conn.execute("SELECT DISTINCT delivery_id FROM delivery_attempts").fetchall()
        assert left == [("dlv_2",)]
