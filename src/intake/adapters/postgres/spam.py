"""The teaching the triage orders do in their transactions on PostgreSQL
(postgres/triage.py), with the statements of the statistics' repository (sql/spam.py,
which says how concurrent teaching never deadlocks; dialect.SPAM)."""

from __future__ import annotations

from psycopg.rows import DictRow

from intake.adapters import spam_statements as spam_sql
from intake.adapters.postgres.database import Connection
from intake.adapters.postgres.dialect import SPAM
from intake.adapters.sql_statements import for_psycopg
from intake.domain.spam.model import Label, Lesson
from intake.domain.spam.teaching import Tally, delta, stored_label, taught_label

_BUMP_SCOPE = for_psycopg(spam_sql.BUMP_SCOPE)
_UPSERT_COUNTS = for_psycopg(SPAM.upsert_tokens)
_CLAMP = for_psycopg(SPAM.clamp or "")
_SET_TAUGHT = for_psycopg(spam_sql.SET_TAUGHT)


async def write(conn: Connection, tally: Tally) -> None:
    """Inside the caller's transaction."""
    for scope, changes in tally.scopes():
        params = {"scope": scope, "spam": changes.spam_messages, "ham": changes.ham_messages}
        row = await (await conn.execute(_BUMP_SCOPE, params)).fetchone()
        assert row is not None  # an upsert's RETURNING
        tokens = changes.sorted_tokens()
        if not tokens:
            continue
        (batch,) = SPAM.token_batch(scope, row["generation"], tokens)
        await conn.execute(_UPSERT_COUNTS, batch)
        if any(s < 0 or h < 0 for _, s, h in tokens):
            await conn.execute(_CLAMP, batch)


async def teach(
    conn: Connection, submission_id: str, row: DictRow, lesson: Lesson, label: Label | None
) -> None:
    """Makes the submission (its locked `row`: workspace_id, taught) teach `label` (None:
    nothing, as an erasure does), inside the caller's transaction."""
    tally = Tally()
    tally.add(row["workspace_id"], lesson.hashes, delta(taught_label(row["taught"]), label))
    if not tally:
        return
    await write(conn, tally)
    await conn.execute(_SET_TAUGHT, (stored_label(label), submission_id))
