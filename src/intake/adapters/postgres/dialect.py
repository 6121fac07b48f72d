"""The statements the `sql` repositories take from the PostgreSQL store, where it is
written otherwise than SQLite (sqlite/dialect.py)."""

from __future__ import annotations

from collections.abc import Sequence

from intake.adapters import sql_statements as sql
from intake.adapters.sql.activity import ActivityStatement
from intake.adapters.sql.claims import CLAIMED_COLUMNS, destination_joins, sendable
from intake.adapters.sql.deliveries import DeliveryStatements
from intake.adapters.sql.executor import Params
from intake.adapters.sql.fan_out import FanOutStatements
from intake.adapters.sql.purge import PurgeStatements
from intake.adapters.sql.spam import SpamStatements, TokenChanges
from intake.adapters.sql_rows import as_is
from intake.adapters.submission_pages import Search, like_pattern

# Purging, oldest first. The batch is chosen once (ARRAY(...) is an InitPlan) by a range
# scan of an index (idempotency_created; outbox_published, partial, of published rows
# only), then deleted row by row: a join on the batch lets the planner read the whole
# table to hash it, at every batch. SKIP LOCKED: a row another purge has taken, or a
# commit is replacing, is left to it, so two purges at once neither wait on each other
# nor deadlock, and each row is deleted and counted once.
#
# The idempotency key is two columns, so the batch is its rows' ctids (a TID scan). The
# subquery has locked them, so they stay where they are until this statement ends; a
# row changed in between (replaced by a commit) is not visible at its new ctid, and is
# not deleted.
#
# Published outbox rows: as SQLite's, but for the check of their deliveries, a seek on
# the deliveries' unique index or a read of the few pending and dead by their partial
# indexes, as the planner finds cheaper.
PURGE = PurgeStatements(
    idempotency="""
        DELETE FROM idempotency WHERE ctid = ANY (ARRAY (
            SELECT ctid FROM idempotency
            WHERE created_at <= :cutoff ORDER BY created_at LIMIT :limit
            FOR UPDATE SKIP LOCKED
        ))
    """,
    outbox="""
        DELETE FROM outbox WHERE event_id = ANY (ARRAY (
            SELECT o.event_id FROM outbox AS o
            WHERE o.published_at IS NOT NULL AND o.published_at <= :cutoff
                AND NOT EXISTS (
                    SELECT 1 FROM deliveries AS d
                    WHERE d.event_id = o.event_id
                        AND (d.next_attempt_at IS NOT NULL  -- pending
                            OR (d.state = 'dead' AND d.dead_at > :cutoff))
                )
            ORDER BY o.published_at LIMIT :limit
            FOR UPDATE OF o SKIP LOCKED
        ))
    """,
    autoresponses="""
        DELETE FROM autoresponses WHERE autoresponse_id = ANY (ARRAY (
            SELECT autoresponse_id FROM autoresponses WHERE queued_at <= :cutoff
            LIMIT :limit FOR UPDATE SKIP LOCKED
        ))
    """,
)

# The lists come as arrays. Each form's day is one range of submissions_form_created,
# whose entries hold the status (migration 0022): read alone, never the rows, and counted
# as it is read, with no sort or hash of 100,000 rows on a large form. The dead
# deliveries of the whole span are one range of their partial index deliveries_dead,
# joined to the outbox for their form and given their day by the grid's starts
# (width_bucket: 1 for the first day). One row per form and day with something.
ACTIVITY = ActivityStatement(
    daily_counts="""
        WITH days AS (
            SELECT d.since, d.until, d.day - 1 AS day
            FROM unnest(CAST(:starts AS timestamptz[]), CAST(:ends AS timestamptz[]))
                WITH ORDINALITY AS d(since, until, day)
        ),
        received AS (
            SELECT f.form_id, days.day, c.accepted, c.spam, c.unverified
            FROM (SELECT DISTINCT unnest(CAST(:form_ids AS text[])) AS form_id) AS f
            CROSS JOIN days
            CROSS JOIN LATERAL (
                SELECT count(*) FILTER (WHERE s.status = 'accepted')::integer AS accepted,
                    count(*) FILTER (WHERE s.status = 'spam')::integer AS spam,
                    count(*) FILTER (WHERE s.status = 'unverified')::integer AS unverified
                FROM submissions AS s
                WHERE s.form_id = f.form_id
                    AND s.created_at >= days.since AND s.created_at < days.until
            ) AS c
            WHERE c.accepted + c.spam + c.unverified > 0
        ),
        failed AS (
            SELECT o.form_id,
                width_bucket(d.created_at, CAST(:starts AS timestamptz[])) - 1 AS day,
                count(*)::integer AS failed
            FROM deliveries AS d JOIN outbox AS o ON o.event_id = d.event_id
            WHERE d.state = 'dead' AND d.created_at >= :since AND d.created_at < :until
                AND o.form_id = ANY (:form_ids)
            GROUP BY 1, 2
        )
        SELECT coalesce(r.form_id, x.form_id) AS form_id, coalesce(r.day, x.day) AS day,
            coalesce(r.accepted, 0) AS accepted, coalesce(r.spam, 0) AS spam,
            coalesce(r.unverified, 0) AS unverified, coalesce(x.failed, 0) AS failed
        FROM received AS r FULL JOIN failed AS x ON x.form_id = r.form_id AND x.day = r.day
        ORDER BY 1, 2
    """,
    listed=as_is,
)

# An erasure on request's search: a bitmap of the reply-to index (0016) and the trigram
# index of the search text (0010), each spelling a LIKE of its own so that each is an
# index condition, then the workspace's rows among them. The search text is lowered by
# PostgreSQL, as the reply-to is here.
_CANDIDATES = (
    sql.SELECT_SUBMISSION + " WHERE workspace_id = :workspace_id"
    " AND (lower(reply_to) = ANY (:spellings::text[]) OR {terms})"
    " ORDER BY created_at, submission_id"
)
_TERM = "search_text LIKE lower(:like{index}) ESCAPE '\\'"


def address_search(workspace_id: str, spellings: Sequence[str]) -> tuple[str, dict[str, object]]:
    terms = " OR ".join(_TERM.format(index=index) for index in range(len(spellings)))
    params: dict[str, object] = {"workspace_id": workspace_id, "spellings": list(spellings)}
    params.update({f"like{index}": like_pattern(text) for index, text in enumerate(spellings)})
    return _CANDIDATES.format(terms=terms), params


def _as_arrays(scope: str, generation: int, tokens: TokenChanges) -> list[Params]:
    return [
        {
            "scope": scope,
            "generation": generation,
            "tokens": [t for t, _, _ in tokens],
            "spam": [s for _, s, _ in tokens],
            "ham": [h for _, _, h in tokens],
        }
    ]


# The learning filter's statistics. The submissions locked in one statement, in ascending
# ids. A scope's tokens in one statement of arrays, whose rows are locked in the order
# they are inserted: ascending tokens. A new row takes the change as it is (a count below
# zero is clamped after, rarely needed: only an unlearning of a token no row holds).
SPAM = SpamStatements(
    submissions="""
        SELECT submission_id, workspace_id, status, taught FROM submissions
        WHERE submission_id = ANY (CAST(:ids AS text[])) ORDER BY submission_id FOR UPDATE
    """,
    listed=as_is,
    upsert_tokens="""
        INSERT INTO spam_tokens AS t (scope, token, spam, ham, generation)
        SELECT :scope, d.token, d.spam, d.ham, :generation
        FROM unnest(CAST(:tokens AS bigint[]), CAST(:spam AS int[]), CAST(:ham AS int[]))
            AS d (token, spam, ham)
        ORDER BY d.token
        ON CONFLICT (scope, token) DO UPDATE SET
            spam = greatest(t.spam + excluded.spam, 0),
            ham = greatest(t.ham + excluded.ham, 0),
            generation = excluded.generation
    """,
    token_batch=_as_arrays,
    clamp="""
        UPDATE spam_tokens SET spam = greatest(spam, 0), ham = greatest(ham, 0)
        WHERE scope = :scope AND generation = :generation AND (spam < 0 OR ham < 0)
    """,
)

# A release's month: never refused for quota, the owner decided. On shard 0 of the month
# (made here if the month has no row yet): one more in flight on a shard, as a commit's
# is, so the commits' reasoning about the ceiling (repeatable/intake_commit.sql) holds
# beside it.
CHARGE = """
    INSERT INTO monthly_usage_shards AS m (workspace_id, period, shard, count)
    VALUES (?, ?, 0, 1)
    ON CONFLICT (workspace_id, period, shard) DO UPDATE SET count = m.count + 1
"""

# The relay's claim (sql/claims.py says what it does). One statement, one snapshot, one round trip:
# - head: of the first `limit` due (the deliveries_due index, in its order; read, not
#   locked), those that cannot be sent, locked, with the reason. Only those are looked
#   at, so a claim never reads the whole backlog, and only those are locked, so another
#   relay's claim skips no row this one does not take;
# - parked: the head, dead, with the reason, no attempt counted. A row another relay
#   parked meanwhile is re-read when locked, and is no longer pending;
# - claimed: the first `limit` due that can be sent, leased (a suspended workspace's are
#   held where they are, pending, no attempt counted, until it is active again). The
#   UPDATE over a locking subquery is what makes the lease exclusive: a row another
#   relay holds is skipped, and one it leased and committed meanwhile is re-read and no
#   longer due.
# The two UPDATEs touch different rows (sendable or not, in the one snapshot). Then the
# leased rows with their event and destination, joined by kind, each with the count of
# those parked; one row of NULLs but that count when none was leased.
_CLAIM_CTES = """
    WITH head AS (
        SELECT h.delivery_id,
            CASE
                WHEN h.kind = 'webhook' AND e.endpoint_id IS NULL THEN :endpoint_removed
                WHEN h.kind = 'webhook' THEN :endpoint_disabled
                WHEN h.kind = 'email' THEN :recipient_removed
                ELSE :chat_removed
            END AS reason
        FROM (
            SELECT f.delivery_id FROM deliveries AS f
            WHERE f.next_attempt_at <= :now
                AND (f.leased_until IS NULL OR f.leased_until <= :now)
            ORDER BY f.next_attempt_at, f.delivery_id
            LIMIT :limit
        ) AS first
        JOIN deliveries AS h ON h.delivery_id = first.delivery_id {head_joins}
        WHERE h.next_attempt_at IS NOT NULL AND NOT {head_sendable}
        FOR UPDATE OF h SKIP LOCKED
    ),
    parked AS (
        UPDATE deliveries AS d
        SET state = 'dead', next_attempt_at = NULL, leased_until = NULL,
            dead_at = :now, last_error = head.reason
        FROM head
        WHERE d.delivery_id = head.delivery_id
        RETURNING d.delivery_id
    ),
    claimed AS (
        UPDATE deliveries AS d
        SET leased_until = :leased_until
        WHERE d.delivery_id IN (
            SELECT c.delivery_id
            FROM deliveries AS c {claimed_joins}
            WHERE c.next_attempt_at <= :now
                AND (c.leased_until IS NULL OR c.leased_until <= :now)
                AND {claimed_sendable}
                AND EXISTS (
                    SELECT 1 FROM outbox AS o
                    JOIN workspaces AS w ON w.workspace_id = o.workspace_id
                    WHERE o.event_id = c.event_id AND w.active
                )
            ORDER BY c.next_attempt_at, c.delivery_id
            LIMIT :limit
            FOR UPDATE OF c SKIP LOCKED
        )
        RETURNING d.*
    )
    SELECT""".format(  # noqa: S608 - constants only
    head_joins=destination_joins("h"),
    head_sendable=sendable("h"),
    claimed_joins=destination_joins("c"),
    claimed_sendable=sendable("c"),
)
_CLAIM_FROM = """,
        p.parked
    FROM (SELECT count(*) AS parked FROM parked) AS p
    LEFT JOIN (
        claimed AS d
        JOIN outbox AS o ON o.event_id = d.event_id {joins}
    ) ON true
    ORDER BY d.next_attempt_at, d.delivery_id
""".format(joins=destination_joins("d"))  # noqa: S608 - constants only
_CLAIM = _CLAIM_CTES + CLAIMED_COLUMNS + _CLAIM_FROM

# The outcome's UPDATE (`{update}`), and the attempt kept only when it changed the
# delivery: one statement, so the two are one transaction, in one round trip where the
# transaction of two would take four. Parameters: the UPDATE's, then the attempt's time,
# outcome, status code and error.
_WITH_ATTEMPT = """
    WITH done AS ({update} RETURNING delivery_id)
    INSERT INTO delivery_attempts (delivery_id, attempted_at, outcome, status_code, error)
    SELECT delivery_id, CAST(? AS timestamptz), CAST(? AS text), CAST(? AS integer),
        CAST(? AS text)
    FROM done
"""

# The relay's: SKIP LOCKED, rows another relay is fanning out or claiming are its own;
# lists as arrays.
DELIVERIES = DeliveryStatements(
    fan_out=FanOutStatements(taking="FOR UPDATE SKIP LOCKED", one_of="= ANY (:ids)", listed=as_is),
    claim=_CLAIM,
    with_attempt=_WITH_ATTEMPT,
)

# A listing's search: the trigram index of migration 0010 serves this LIKE on the lowered
# search text kept with each row; the search is lowered by PostgreSQL too, so both fold
# case alike. Planned for its text, never prepared (postgres/submissions.py).
SEARCH = Search("search_text LIKE lower(?) ESCAPE '\\'", like_pattern)

# The stored ids among a list (the upload sweep's check): the primary key sought once per
# id. One parameter whatever the number of ids: one statement to prepare.
EXISTING = "SELECT submission_id FROM submissions WHERE submission_id = ANY (:ids)"
listed = as_is
