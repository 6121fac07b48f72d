"""The statements the `sql` repositories take from the SQLite store, where it is written
otherwise than PostgreSQL (postgres/dialect.py says why each differs)."""

from __future__ import annotations

from collections.abc import Sequence

from intake.adapters import sql_statements as sql
from intake.adapters.sql.activity import ActivityStatement
from intake.adapters.sql.deliveries import DeliveryStatements
from intake.adapters.sql.executor import Params
from intake.adapters.sql.fan_out import FanOutStatements
from intake.adapters.sql.purge import PurgeStatements
from intake.adapters.sql.spam import SpamStatements, TokenChanges
from intake.adapters.sql_rows import json_text
from intake.adapters.sqlite.connection import SEARCH_TEXT_FUNCTION
from intake.adapters.submission_pages import Search

# Purging: a range scan of an index each (idempotency_created; outbox_published, partial,
# of published rows only). SQLite's DELETE takes no LIMIT unless so compiled, hence the
# subquery. `published_at IS NOT NULL` is implied by the comparison; written out all the
# same, as the rule it is (an unpublished row is never deleted) and as the partial
# index's term. A row stays while a delivery of it is pending, or was parked as dead
# after the cutoff (kept for `intake outbox retry` as long as a published row is); its
# deliveries go with it (ON DELETE CASCADE). The check is a seek on the deliveries'
# unique index; pending is said as the deliveries_due index says it. The autoresponder's
# records are few (a form queues at most its hourly limit an hour), read without an index.
PURGE = PurgeStatements(
    idempotency="""
        DELETE FROM idempotency WHERE (scope, key) IN (
            SELECT scope, key FROM idempotency
            WHERE created_at <= :cutoff ORDER BY created_at LIMIT :limit
        )
    """,
    outbox="""
        DELETE FROM outbox WHERE event_id IN (
            SELECT event_id FROM outbox
            WHERE published_at IS NOT NULL AND published_at <= :cutoff
                AND NOT EXISTS (
                    SELECT 1 FROM deliveries AS d
                    WHERE d.event_id = outbox.event_id
                        AND (d.next_attempt_at IS NOT NULL  -- pending
                            OR (d.state = 'dead' AND d.dead_at > :cutoff))
                )
            ORDER BY published_at LIMIT :limit
        )
    """,
    autoresponses="""
        DELETE FROM autoresponses WHERE autoresponse_id IN (
            SELECT autoresponse_id FROM autoresponses WHERE queued_at <= :cutoff LIMIT :limit
        )
    """,
)

# The lists come as JSON: the grid's days are its starts and ends paired by place; each
# day is a range of submissions_form_created per form; the dead deliveries of the whole
# span are one range of deliveries_dead, joined to the outbox for their form; then one
# row per form and day.
ACTIVITY = ActivityStatement(
    daily_counts="""
        WITH days (day, start_at, end_at) AS (
            SELECT CAST(s.key AS INTEGER), s.value, e.value
            FROM json_each(:starts) AS s JOIN json_each(:ends) AS e ON e.key = s.key
        ),
        counted (form_id, day, what) AS (
            SELECT s.form_id, d.day, s.status
            FROM days AS d JOIN submissions AS s
                ON s.form_id IN (SELECT value FROM json_each(:form_ids))
                AND s.created_at >= d.start_at AND s.created_at < d.end_at
            UNION ALL
            SELECT o.form_id, d.day, 'failed'
            FROM deliveries AS dl CROSS JOIN days AS d  -- dl first: one range of deliveries_dead
            JOIN outbox AS o ON o.event_id = dl.event_id
            WHERE dl.state = 'dead' AND dl.created_at >= :since AND dl.created_at < :until
                AND dl.created_at >= d.start_at AND dl.created_at < d.end_at
                AND o.form_id IN (SELECT value FROM json_each(:form_ids))
        )
        SELECT form_id, day,
            sum(what = 'accepted') AS accepted,
            sum(what = 'spam') AS spam,
            sum(what = 'unverified') AS unverified,
            sum(what = 'failed') AS failed
        FROM counted
        GROUP BY form_id, day
        ORDER BY form_id, day
    """,
    listed=json_text,
)

# An erasure on request's search: the workspace's submissions, form by form through
# forms_workspace and submissions_form, whose reply-to or data text holds a spelling: a
# scan of the workspace, as SQLite's search is (docs/api.md, "Listing and search"). The
# data is JSON text written without escapes (ensure_ascii off), so a value's text is in
# it. SQLite's lower() folds ASCII only: a spelling beyond it is looked for in the
# search text (Python's lower, as the listing's search), which parses each row's JSON.
_CANDIDATES = (
    sql.SELECT_SUBMISSION  # noqa: S608 - constants only; the terms are placeholders
    + " WHERE form_id IN (SELECT form_id FROM forms WHERE workspace_id = ?)"
    " AND workspace_id = ? AND ({terms}) ORDER BY created_at, submission_id"
)
_ASCII_TERM = "lower(coalesce(reply_to, '')) = ? OR instr(lower(data), ?) > 0"
_TERM = f"lower(coalesce(reply_to, '')) = ? OR instr({SEARCH_TEXT_FUNCTION}(data), ?) > 0"


def address_search(workspace_id: str, spellings: Sequence[str]) -> tuple[str, list[object]]:
    terms = [_ASCII_TERM if text.isascii() else _TERM for text in spellings]
    params: list[object] = [workspace_id, workspace_id]
    for text in spellings:
        params += [text, text]
    return _CANDIDATES.format(terms=" OR ".join(terms)), params


def _each_token(scope: str, generation: int, tokens: TokenChanges) -> list[Params]:
    return [
        {"scope": scope, "token": t, "spam": s, "ham": h, "generation": generation}
        for t, s, h in tokens
    ]


# The learning filter's statistics. Submissions read one by one in ascending ids, under
# the write lock. A scope's tokens one row each, in one hop (executemany), ascending; a
# token falling to zero keeps its row, with the generation that zeroed it.
SPAM = SpamStatements(
    submissions="""
        SELECT submission_id, workspace_id, status, taught FROM submissions
        WHERE submission_id IN (SELECT value FROM json_each(:ids))
        ORDER BY submission_id
    """,
    listed=json_text,
    upsert_tokens="""
        INSERT INTO spam_tokens (scope, token, spam, ham, generation)
        VALUES (:scope, :token, max(:spam, 0), max(:ham, 0), :generation)
        ON CONFLICT (scope, token) DO UPDATE SET
            spam = max(spam + :spam, 0),
            ham = max(ham + :ham, 0),
            generation = excluded.generation
    """,
    token_batch=_each_token,
)

# A release's month: never refused, the owner decided (management-api.md). The month's
# row is made if the month has none yet.
CHARGE = """
    INSERT INTO monthly_usage (workspace_id, period, count) VALUES (?, ?, 1)
    ON CONFLICT (workspace_id, period) DO UPDATE SET count = monthly_usage.count + 1
"""

# The relay's: the fan-out reads the outbox's rows under the write lock, so a second
# relay waits, and is given its lists as JSON; the claim and the record of an attempt are
# steps of a transaction (sql/claims.py, sql/attempts.py).
DELIVERIES = DeliveryStatements(
    fan_out=FanOutStatements(
        taking="",
        one_of="IN (SELECT value FROM json_each(:ids))",
        listed=json_text,
    )
)

# A listing's search: a scan of the form's rows in id order, the text of each looked for
# in Python's lower case (the connection's function): no index of its own, so nothing more
# is written per commit. docs/api.md, "Listing and search", says why.
SEARCH = Search(f"instr({SEARCH_TEXT_FUNCTION}(data), ?) > 0", str.lower)

# The stored ids among a list (the upload sweep's check): the primary key sought once per
# id; the list as JSON.
EXISTING = """
    SELECT submission_id FROM submissions
    WHERE submission_id IN (SELECT value FROM json_each(:ids))
"""
listed = json_text
