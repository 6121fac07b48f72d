"""The statements SQLite and PostgreSQL send alike, each written once.

They are written in sqlite3's own placeholder styles, `?` (positional) and `:name` (named,
matching `sql_rows`' params), so the SQLite store sends them as they are; the PostgreSQL
store sends them through `for_psycopg`. What one store says its own way stays in its
modules: the commit, the leases and batches taken FOR UPDATE SKIP LOCKED, the purge,
the usage count over shards, LISTEN/NOTIFY.
"""

from __future__ import annotations

import re

# A string literal or a comment (kept as written), or a placeholder, or a percent sign.
_TOKEN = re.compile(r"'(?:[^']|'')*'|--[^\n]*|\?|(?<!:):([A-Za-z_]\w*)|%")


def for_psycopg(statement: str) -> str:
    """The statement in psycopg's placeholder styles: `?` as `%s`, `:name` as `%(name)s`.

    A `%` is refused rather than doubled: psycopg reads `%%` as one only when the
    statement is sent with parameters, and some are sent without."""

    def render(token: re.Match[str]) -> str:
        text = token.group(0)
        if text == "%":
            raise ValueError(f"a percent sign in a shared statement: {statement!r}")
        if text == "?":
            return "%s"
        name = token.group(1)
        return text if name is None else f"%({name})s"

    return _TOKEN.sub(render, statement)


# Workspaces

INSERT_WORKSPACE = """
    INSERT INTO workspaces (
        workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    ) VALUES (
        :workspace_id, :name, :plan, :monthly_limit, :active, :created_at, :storage_limit
    )
"""
UPDATE_WORKSPACE = """
    UPDATE workspaces
    SET name = :name, plan = :plan, monthly_limit = :monthly_limit, active = :active,
        created_at = :created_at, storage_limit = :storage_limit
    WHERE workspace_id = :workspace_id
"""
SELECT_WORKSPACE = """
    SELECT workspace_id, name, plan, monthly_limit, active, created_at, storage_limit
    FROM workspaces
"""
GET_WORKSPACE = SELECT_WORKSPACE + " WHERE workspace_id = ?"
LIST_WORKSPACES = SELECT_WORKSPACE + " ORDER BY workspace_id"
USAGE_IN_PERIOD = """
    SELECT w.workspace_id, w.name, w.plan, w.monthly_limit, w.active, w.created_at,
        w.storage_limit, u.count
    FROM monthly_usage AS u JOIN workspaces AS w ON w.workspace_id = u.workspace_id
    WHERE u.period = ? AND u.count > 0
    ORDER BY w.workspace_id
"""
STORAGE_USED = "SELECT bytes FROM workspace_storage WHERE workspace_id = ?"
# Each form's month: its charged submissions (the partial index submissions_form_charged)
# and its honeypot hits on the month's days (`first_day` to `last_day`, YYYY-MM-DD).
FORM_USAGE = """
    SELECT f.form_id,
        (SELECT count(*) FROM submissions AS s
            WHERE s.form_id = f.form_id AND s.charged_period = :period) AS used,
        (SELECT coalesce(sum(h.count), 0) FROM honeypot_hits AS h
            WHERE h.form_id = f.form_id AND h.day BETWEEN :first_day AND :last_day)
            AS honeypot_hits
    FROM forms AS f
    WHERE f.workspace_id = :workspace_id AND f.deleted_at IS NULL
    ORDER BY f.form_id
"""


# Each form's submissions received in [since, until), by status (submissions_form_status).
STATUS_COUNTS = """
    SELECT f.form_id,
        (SELECT count(*) FROM submissions AS s WHERE s.form_id = f.form_id
            AND s.status = 'accepted' AND s.created_at >= :since AND s.created_at < :until)
            AS accepted,
        (SELECT count(*) FROM submissions AS s WHERE s.form_id = f.form_id
            AND s.status = 'spam' AND s.created_at >= :since AND s.created_at < :until)
            AS spam,
        (SELECT count(*) FROM submissions AS s WHERE s.form_id = f.form_id
            AND s.status = 'unverified' AND s.created_at >= :since AND s.created_at < :until)
            AS unverified
    FROM forms AS f
    WHERE f.workspace_id = :workspace_id AND f.deleted_at IS NULL
    ORDER BY f.form_id
"""


# A workspace's setup (WorkspaceRepository.setup), each part reached through its live
# forms, along the indexes by form.
WORKSPACE_SETUP = """
    SELECT
        EXISTS (SELECT 1 FROM forms AS f
            WHERE f.workspace_id = :workspace_id AND f.deleted_at IS NULL) AS has_form,
        EXISTS (SELECT 1 FROM forms AS f JOIN submissions AS s ON s.form_id = f.form_id
            WHERE f.workspace_id = :workspace_id AND f.deleted_at IS NULL) AS has_submission,
        (EXISTS (SELECT 1 FROM forms AS f JOIN webhook_endpoints AS e ON e.form_id = f.form_id
            WHERE f.workspace_id = :workspace_id AND f.deleted_at IS NULL)
        OR EXISTS (SELECT 1 FROM forms AS f
            JOIN notification_recipients AS r ON r.form_id = f.form_id
            WHERE f.workspace_id = :workspace_id AND f.deleted_at IS NULL)
        OR EXISTS (SELECT 1 FROM forms AS f JOIN chat_destinations AS c ON c.form_id = f.form_id
            WHERE f.workspace_id = :workspace_id AND f.deleted_at IS NULL)) AS has_destination
"""


def form_usage_params(workspace_id: str, period: str) -> dict[str, str]:
    """FORM_USAGE's parameters: the period and its days (a day past the month's last
    matches no row, so the 31st bounds every month)."""
    return {
        "workspace_id": workspace_id,
        "period": period,
        "first_day": f"{period}-01",
        "last_day": f"{period}-31",
    }


# Forms

INSERT_FORM = """
    INSERT INTO forms (
        form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at,
        uploads, retention_days, messages
    ) VALUES (
        :form_id, :workspace_id, :public_form_key, :name, :mode, :enabled, :allowed_origins,
        :rules, :spam_threshold, :challenge_provider, :challenge_secret, :redirect_url,
        :created_at, :uploads, :retention_days, :messages
    )
"""
UPDATE_FORM = """
    UPDATE forms
    SET workspace_id = :workspace_id, public_form_key = :public_form_key, name = :name,
        mode = :mode, enabled = :enabled, allowed_origins = :allowed_origins, rules = :rules,
        spam_threshold = :spam_threshold, challenge_provider = :challenge_provider,
        challenge_secret = :challenge_secret, redirect_url = :redirect_url,
        created_at = :created_at, uploads = :uploads, retention_days = :retention_days,
        messages = :messages
    WHERE form_id = :form_id
"""
SELECT_FORM = """
    SELECT form_id, workspace_id, public_form_key, name, mode, enabled, allowed_origins, rules,
        spam_threshold, challenge_provider, challenge_secret, redirect_url, created_at, uploads,
        retention_days, messages
    FROM forms
"""
# A deleted form (deleted_at set) is found by none of them: it is gone for its owner.
GET_FORM = SELECT_FORM + " WHERE form_id = ? AND deleted_at IS NULL"
LIST_FORMS = SELECT_FORM + " WHERE deleted_at IS NULL ORDER BY form_id"
LIST_WORKSPACE_FORMS = (
    SELECT_FORM + " WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY form_id"
)
# The form and its workspace in one statement; the workspace's columns are aliased `w_*`.
SELECT_CONTEXT = """
    SELECT f.form_id, f.workspace_id, f.public_form_key, f.name, f.mode, f.enabled,
        f.allowed_origins, f.rules, f.spam_threshold, f.challenge_provider,
        f.challenge_secret, f.redirect_url, f.created_at, f.uploads, f.retention_days,
        f.messages, w.workspace_id AS w_workspace_id, w.name AS w_name, w.plan AS w_plan,
        w.monthly_limit AS w_monthly_limit, w.active AS w_active,
        w.created_at AS w_created_at, w.storage_limit AS w_storage_limit
    FROM forms AS f JOIN workspaces AS w ON w.workspace_id = f.workspace_id
"""
RESOLVE_PUBLIC_KEY = SELECT_CONTEXT + " WHERE f.public_form_key = ? AND f.deleted_at IS NULL"
RESOLVE_ID = SELECT_CONTEXT + " WHERE f.form_id = ? AND f.deleted_at IS NULL"
# A form's deletion (FormRepository.mark_deleted, .remove_deleted): marked and disabled
# at once, so that no lookup finds it, and its public key replaced by one no request
# can carry, so that a commit under way on a lookup kept a moment longer is refused as
# `form_not_found`; removed once nothing of it is left to erase or to deliver.
MARK_FORM_DELETED = """
    UPDATE forms SET deleted_at = ?, enabled = ?, public_form_key = 'deleted:' || form_id
    WHERE form_id = ? AND deleted_at IS NULL
"""
DELETED_FORMS = """
    SELECT form_id FROM forms WHERE deleted_at IS NOT NULL AND form_id > ?
    ORDER BY form_id LIMIT ?
"""
# 1 when the deleted form holds no submission, no event of it waits for its fan-out and
# no delivery of its events waits to be sent (a dead one waits for no one).
FORM_REMOVABLE = """
    SELECT 1 FROM forms AS f
    WHERE f.form_id = ? AND f.deleted_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM submissions AS s WHERE s.form_id = f.form_id)
        AND NOT EXISTS (SELECT 1 FROM outbox AS o WHERE o.form_id = f.form_id
            AND o.published_at IS NULL AND o.dead_at IS NULL)
        AND NOT EXISTS (SELECT 1 FROM deliveries AS d JOIN outbox AS o
            ON o.event_id = d.event_id
            WHERE o.form_id = f.form_id AND d.state = 'pending')
"""
# Its destinations and the autoresponder's records go with it (ON DELETE CASCADE).
REMOVE_FORM_HONEYPOT_HITS = "DELETE FROM honeypot_hits WHERE form_id = ?"
REMOVE_FORM = "DELETE FROM forms WHERE form_id = ?"

# API keys

INSERT_API_KEY = """
    INSERT INTO api_keys
        (key_id, workspace_id, key_hash, prefix, created_at, revoked_at, scopes)
    VALUES (:key_id, :workspace_id, :key_hash, :prefix, :created_at, :revoked_at, :scopes)
"""
SELECT_API_KEY = """
    SELECT key_id, workspace_id, key_hash, prefix, created_at, revoked_at, scopes
    FROM api_keys
"""
FIND_API_KEY = SELECT_API_KEY + " WHERE key_hash = ?"
GET_API_KEY = SELECT_API_KEY + " WHERE key_id = ?"
LIST_API_KEYS = SELECT_API_KEY + " WHERE workspace_id = ? ORDER BY created_at, key_id"
# COALESCE keeps the first revocation time when a key is revoked again.
REVOKE_API_KEY = "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ?"

# Submissions, their events, idempotency records

SELECT_SUBMISSION = """
    SELECT submission_id, form_id, workspace_id, status, data, subject, reply_to, spam_score,
        client_ip, created_at, files, spam_reasons
    FROM submissions
"""
GET_SUBMISSION = SELECT_SUBMISSION + " WHERE submission_id = ?"
INSERT_EVENT = """
    INSERT INTO outbox (
        event_id, event_type, submission_id, form_id, workspace_id, payload, created_at,
        next_attempt_at
    ) VALUES (
        :event_id, :event_type, :submission_id, :form_id, :workspace_id, :payload, :created_at,
        :next_attempt_at
    )
"""
OUTBOX = """
    SELECT event_id, event_type, submission_id, form_id, workspace_id, payload, created_at,
        published_at
    FROM outbox ORDER BY event_id LIMIT ?
"""
FIND_IDEMPOTENCY = """
    SELECT scope, key, fingerprint, submission_id, created_at FROM idempotency
    WHERE scope = ? AND key = ? AND created_at > ?
"""

# Destinations

INSERT_ENDPOINT = """
    INSERT INTO webhook_endpoints (
        endpoint_id, form_id, url, secret, include_flagged, created_at, disabled_at
    ) VALUES (
        :endpoint_id, :form_id, :url, :secret, :include_flagged, :created_at, :disabled_at
    )
"""
SELECT_ENDPOINT = """
    SELECT endpoint_id, form_id, url, secret, include_flagged, created_at, disabled_at
    FROM webhook_endpoints
"""
GET_ENDPOINT = SELECT_ENDPOINT + " WHERE endpoint_id = ?"


def in_workspace(lookup: str, table: str) -> str:
    """A lookup by primary key (`... WHERE <key> = ?`) that also takes a workspace id
    and finds the row only when its form is that workspace's: one query, so another
    workspace's id is answered as a missing one is, by the same work."""
    # `table` is one of this module's callers' constants, never a caller's text.
    owned = f" AND EXISTS (SELECT 1 FROM forms WHERE forms.form_id = {table}.form_id"  # noqa: S608
    return lookup + owned + " AND forms.workspace_id = ?)"


GET_ENDPOINT_IN = in_workspace(GET_ENDPOINT, "webhook_endpoints")
# NULLS FIRST is SQLite's own order, written out as PostgreSQL needs it said (and as its
# index is built).
LIST_ENDPOINTS = SELECT_ENDPOINT + " WHERE form_id = ? ORDER BY created_at NULLS FIRST, endpoint_id"
REMOVE_ENDPOINT = "DELETE FROM webhook_endpoints WHERE endpoint_id = ?"
# COALESCE keeps the first time an endpoint was disabled.
DISABLE_ENDPOINT = """
    UPDATE webhook_endpoints SET disabled_at = COALESCE(disabled_at, ?) WHERE endpoint_id = ?
"""
# A second recipient with the same address writes nothing: the caller is told.
INSERT_RECIPIENT = """
    INSERT INTO notification_recipients (
        recipient_id, form_id, email, created_at, status, confirm_hash
    ) VALUES (:recipient_id, :form_id, :email, :created_at, :status, :confirm_hash)
    ON CONFLICT (form_id, email) DO NOTHING
"""
SELECT_RECIPIENT = (
    "SELECT recipient_id, form_id, email, created_at, status FROM notification_recipients"
)
# A pending recipient's answer, by its link's hash: confirmed (or declined), the link
# spent in the same statement, so it answers once.
FIND_PENDING_RECIPIENT = SELECT_RECIPIENT + " WHERE confirm_hash = ? AND status = 'pending'"
ANSWER_RECIPIENT = """
    UPDATE notification_recipients SET status = ?, confirm_hash = NULL
    WHERE confirm_hash = ? AND status = 'pending'
    RETURNING recipient_id, form_id, email, created_at, status
"""
LIST_RECIPIENTS = (
    SELECT_RECIPIENT + " WHERE form_id = ? ORDER BY created_at NULLS FIRST, recipient_id"
)
REMOVE_RECIPIENT = "DELETE FROM notification_recipients WHERE recipient_id = ?"
# How many of each kind of destination a form has, read before adding one under a bound
# (domain/destination_limits.py), in the adding transaction.
COUNT_ENDPOINTS = "SELECT count(*) AS n FROM webhook_endpoints WHERE form_id = ?"
COUNT_RECIPIENTS = "SELECT count(*) AS n FROM notification_recipients WHERE form_id = ?"

# Deliveries

# That the event of a submission (s) is still on its way: its outbox row unpublished,
# or a delivery of it not delivered (pending, or dead and waiting for a retry).
EVENT_UNDER_WAY = """EXISTS (
        SELECT 1 FROM outbox AS o
        WHERE o.submission_id = s.submission_id
            AND (o.published_at IS NULL OR EXISTS (
                SELECT 1 FROM deliveries AS d
                WHERE d.event_id = o.event_id AND d.state <> 'delivered'
            ))
    )"""
# What a claimed delivery (d, or c in PostgreSQL's claim) is sent with: its outbox event
# (o) and its endpoint (e) or recipient (r), named by prefix as sql_rows reads them.
CLAIMED_WITH = """
        o.event_id AS o_event_id, o.event_type AS o_event_type,
        o.submission_id AS o_submission_id, o.form_id AS o_form_id,
        o.workspace_id AS o_workspace_id, o.payload AS o_payload,
        o.created_at AS o_created_at, o.published_at AS o_published_at,
        e.endpoint_id AS e_endpoint_id, e.form_id AS e_form_id, e.url AS e_url,
        e.secret AS e_secret, e.include_flagged AS e_include_flagged,
        e.created_at AS e_created_at, e.disabled_at AS e_disabled_at,
        r.recipient_id AS r_recipient_id, r.form_id AS r_form_id, r.email AS r_email,
        r.created_at AS r_created_at, r.status AS r_status"""

INSERT_DELIVERY = """
    INSERT INTO deliveries (
        delivery_id, event_id, kind, destination_id, state, attempts, next_attempt_at,
        created_at
    ) VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)
    ON CONFLICT (event_id, kind, destination_id) DO NOTHING
"""
# A success is kept whatever came before (a parked delivery was delivered all the same),
# but once: a second report of it counts no second attempt.
SUCCEEDED = """
    UPDATE deliveries
    SET state = 'delivered', attempts = attempts + 1, next_attempt_at = NULL,
        leased_until = NULL, delivered_at = ?, dead_at = NULL
    WHERE delivery_id = ? AND state <> 'delivered'
"""
# A failure counts only on a pending delivery: a relay whose lease ran out must not undo
# what the relay that took over recorded.
FAILED_AGAIN = """
    UPDATE deliveries
    SET attempts = attempts + 1, next_attempt_at = ?, leased_until = NULL, last_error = ?
    WHERE delivery_id = ? AND state = 'pending'
"""
FAILED_DEAD = """
    UPDATE deliveries
    SET state = 'dead', attempts = attempts + 1, next_attempt_at = NULL,
        leased_until = NULL, last_error = ?, dead_at = ?
    WHERE delivery_id = ? AND state = 'pending'
"""
SELECT_DELIVERY = """
    SELECT delivery_id, event_id, kind, destination_id, state, attempts, next_attempt_at,
        leased_until, last_error, delivered_at, dead_at, created_at
    FROM deliveries
"""
LIST_DELIVERIES = SELECT_DELIVERY + " ORDER BY created_at DESC, delivery_id DESC LIMIT ?"
LIST_DEAD = (
    SELECT_DELIVERY + " WHERE state = 'dead' ORDER BY created_at DESC, delivery_id DESC LIMIT ?"
)
# The last error stays, for the record, until the next attempt replaces it.
RETRY_DEAD = """
    UPDATE deliveries
    SET state = 'pending', attempts = 0, next_attempt_at = ?, leased_until = NULL,
        dead_at = NULL
    WHERE event_id = ? AND state = 'dead'
"""
EVENT_KNOWN = "SELECT 1 FROM outbox WHERE event_id = ?"
# Pending and unpublished as the backlog says them (each on its partial index); one
# statement, one snapshot, so the four agree with each other. `delivered` reads the
# whole table: it holds what `intake purge` has not yet deleted.
COUNTS = """
    SELECT
        (SELECT count(*) FROM outbox WHERE published_at IS NULL AND dead_at IS NULL)
            AS unpublished,
        (SELECT count(*) FROM deliveries WHERE next_attempt_at IS NOT NULL) AS pending,
        (SELECT count(*) FROM deliveries WHERE state = 'delivered') AS delivered,
        (SELECT count(*) FROM deliveries WHERE state = 'dead') AS dead
"""
