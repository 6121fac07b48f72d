"""The teaching the triage orders do in their transactions on SQLite's worker thread
(sqlite/triage.py), under its write lock, with the statements of the statistics'
repository (sql/spam.py, dialect.SPAM)."""

from __future__ import annotations

import sqlite3

from intake.adapters import spam_statements as spam_sql
from intake.adapters.sqlite.dialect import SPAM
from intake.domain.spam.model import Label, Lesson
from intake.domain.spam.teaching import Tally, delta, stored_label, taught_label


def write(conn: sqlite3.Connection, tally: Tally) -> None:
    """Inside the caller's transaction."""
    for scope, changes in tally.scopes():
        params = {"scope": scope, "spam": changes.spam_messages, "ham": changes.ham_messages}
        generation = conn.execute(spam_sql.BUMP_SCOPE, params).fetchone()[0]
        tokens = changes.sorted_tokens()
        conn.executemany(SPAM.upsert_tokens, SPAM.token_batch(scope, generation, tokens))


def teach(
    conn: sqlite3.Connection,
    submission_id: str,
    row: sqlite3.Row,
    lesson: Lesson,
    label: Label | None,
) -> None:
    """Makes the submission (its `row`: workspace_id, taught) teach `label` (None:
    nothing, as an erasure does), inside the caller's transaction."""
    taught = taught_label(row["taught"])
    tally = Tally()
    tally.add(row["workspace_id"], lesson.hashes, delta(taught, label))
    if not tally:
        return
    write(conn, tally)
    conn.execute(spam_sql.SET_TAUGHT, (stored_label(label), submission_id))
