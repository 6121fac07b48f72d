"""The statements of the repositories the SQLite store makes when first used (store.py:
the deliveries, the activity counts), where SQLite's are written otherwise than
PostgreSQL's (postgres/dialect.py says why). Apart from dialect.py, so that a command
that never reaches them does not import their modules: the outbox's fan-out brings the
autoresponder's and the notifications' rules with it."""

from __future__ import annotations

from intake.adapters.sql.activity import ActivityStatement
from intake.adapters.sql.deliveries import DeliveryStatements
from intake.adapters.sql.fan_out import FanOutStatements
from intake.adapters.sql_rows import json_text

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
