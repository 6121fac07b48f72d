"""The SQL of the learning filter's statistics that SQLite and PostgreSQL send alike,
written as SQLite takes it (sql/spam.py sends them). What each store writes its own way,
the batch of a scope's tokens and the submissions' locks, is in its dialect.py."""

from __future__ import annotations

from intake.adapters import sql_statements as sql

# The scope's generation one more, its counts never below zero. The existing row's columns
# are named by its table: PostgreSQL would find a bare name ambiguous beside `excluded`.
BUMP_SCOPE = """
    INSERT INTO spam_scopes (scope, spam_messages, ham_messages, generation)
    VALUES (
        :scope, CASE WHEN :spam > 0 THEN :spam ELSE 0 END,
        CASE WHEN :ham > 0 THEN :ham ELSE 0 END, 1
    )
    ON CONFLICT (scope) DO UPDATE SET
        spam_messages = CASE WHEN spam_scopes.spam_messages + :spam > 0
            THEN spam_scopes.spam_messages + :spam ELSE 0 END,
        ham_messages = CASE WHEN spam_scopes.ham_messages + :ham > 0
            THEN spam_scopes.ham_messages + :ham ELSE 0 END,
        generation = spam_scopes.generation + 1
    RETURNING generation
"""

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
