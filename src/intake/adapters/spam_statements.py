"""The SQL of the learning filter's statistics that SQLite and PostgreSQL send alike,
written as SQLite takes it; PostgreSQL's module renders it for psycopg
(`sql_statements.for_psycopg`). The writes, each store's own way of clamping and
batching, stay in their modules (sqlite/spam.py, postgres/spam.py)."""

from __future__ import annotations

from intake.adapters import sql_statements as sql

SCOPE = "SELECT spam_messages, ham_messages, generation FROM spam_scopes WHERE scope = ?"
# A full load: the tokens that count, the most used first when they do not all fit.
ALL_TOKENS = """
    SELECT token, spam, ham FROM spam_tokens
    WHERE scope = ? AND (spam > 0 OR ham > 0)
    ORDER BY spam + ham DESC, token LIMIT ?
"""
# A delta (spam_tokens_generation): zero rows too, so that a process drops them.
CHANGED_TOKENS = """
    SELECT token, spam, ham FROM spam_tokens
    WHERE scope = ? AND generation > ?
    ORDER BY spam + ham DESC, token LIMIT ?
"""
COUNT_TOKENS = (
    "SELECT count(*) AS tokens FROM spam_tokens WHERE scope = ? AND (spam > 0 OR ham > 0)"
)
TAUGHT = "SELECT taught FROM submissions WHERE submission_id = ?"
SET_TAUGHT = "UPDATE submissions SET taught = ? WHERE submission_id = ?"
# What the rule for untouched submissions may settle, oldest first. A scan in the
# background sweep's own time: no index of it would cost every commit an entry.
UNTAUGHT = (
    sql.SELECT_SUBMISSION
    + """
    WHERE status IN ('accepted', 'spam') AND taught IS NULL AND created_at < ?
        AND CAST(data AS TEXT) <> '{}'
    ORDER BY created_at, submission_id LIMIT ?
"""
)
