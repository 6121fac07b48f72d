"""The statements the `sql` repositories take from the SQLite store, where it is written
otherwise than PostgreSQL (postgres/dialect.py says why each differs). Those of the
repositories the store makes when first used are in dialect_on_use.py."""

from __future__ import annotations

from collections.abc import Sequence

from intake.adapters import sql_statements as sql
from intake.adapters.sql.executor import Params
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
