"""The dashboard bench's database contents, made by PostgreSQL itself: one form with
`rows` submissions over 90 days, 49 copies of it with 1,000 each over 30 days, and dead
deliveries; then the statistics and checkpoint a database grown slowly would have."""

from __future__ import annotations

import psycopg

OTHER_FORMS = 49
OTHER_ROWS = 1_000
SPAN_SECONDS = 90 * 86_400  # the large form's rows spread over the 90 days of its chart
RARE = "quixotic"  # one row in 100,000 holds it
COMMON = "example.com"  # every row holds it

# The large form's rows, evenly spaced over 90 days back from now, ids time-sortable (hex
# digits are Crockford base32 digits), statuses 90/7/3 % accepted, spam, unverified.
_SEED = """
    INSERT INTO submissions (submission_id, form_id, workspace_id, status, data, reply_to,
        spam_score, client_ip, created_at)
    SELECT 'sub_' || lpad(to_hex(%(rows)s + 1 - n), 29, '0'), %(form_id)s, %(workspace_id)s,
        CASE WHEN n %% 100 < 90 THEN 'accepted' WHEN n %% 100 < 97 THEN 'spam'
            ELSE 'unverified' END,
        json_build_object(
            'name', 'Person ' || n,
            'email', 'user' || n || '@example.com',
            'message', CASE WHEN n %% 100000 = 7 THEN 'A quixotic question about plans'
                ELSE 'Hello, I would like to know more about plan ' || (n %% 997) END
        ),
        'user' || n || '@example.com', 0.5, '198.18.0.1',
        now() - n * (%(span)s::float8 / %(rows)s) * interval '1 second'
    FROM generate_series(1, %(rows)s::bigint) AS n
"""
_SEED_OTHER = """
    INSERT INTO submissions (submission_id, form_id, workspace_id, status, data, spam_score,
        created_at)
    SELECT 'sub_' || lpad(to_hex(%(offset)s + n), 29, '0'), %(form_id)s, %(workspace_id)s,
        'accepted', '{"email": "a@example.com"}', 0.1, now() - n * interval '2592 seconds'
    FROM generate_series(1, %(rows)s::bigint) AS n
"""
# A dead delivery for one accepted submission of the large form in 256.
_SEED_DEAD = """
    WITH events AS (
        INSERT INTO outbox (event_id, event_type, submission_id, form_id, workspace_id,
            payload, created_at, published_at, next_attempt_at)
        SELECT 'evt_' || submission_id, 'submission.created', submission_id, form_id,
            workspace_id, '{}', created_at, created_at, created_at
        FROM submissions WHERE form_id = %(form_id)s AND status = 'accepted'
            AND right(submission_id, 2) = '32'
        RETURNING event_id, created_at
    )
    INSERT INTO deliveries (delivery_id, event_id, kind, destination_id, state, attempts,
        last_error, dead_at, created_at)
    SELECT 'dlv_' || event_id, event_id, 'webhook', 'wh_bench', 'dead', 8, 'HTTP 503',
        created_at, created_at
    FROM events
"""
# The submission whose page is timed: one with a dead delivery, halfway down the form.
_SHOWN = """
    SELECT o.submission_id FROM outbox AS o WHERE o.form_id = %(form_id)s
    ORDER BY o.submission_id LIMIT 1 OFFSET (SELECT count(*) / 2 FROM outbox)
"""
_FIRST = "SELECT min(submission_id) FROM submissions WHERE form_id = %(form_id)s"


def copies(url: str, form_id: str) -> list[str]:
    """OTHER_FORMS copies of the form, each with an id and public key of its own."""
    made = [f"frm_bench{n:04d}" for n in range(OTHER_FORMS)]
    with psycopg.connect(url, autocommit=True) as conn:
        columns = [
            row[0]
            for row in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'forms'"
                " AND is_generated = 'NEVER' ORDER BY ordinal_position"
            )
        ]
        chosen = ", ".join(
            {"form_id": "%(copy)s", "public_form_key": "%(key)s"}.get(c, c) for c in columns
        )
        copy = (
            f"INSERT INTO forms ({', '.join(columns)}) "  # noqa: S608 - the table's own names
            f"SELECT {chosen} FROM forms WHERE form_id = %(form_id)s"
        )
        for copy_id in made:
            conn.execute(copy, {"copy": copy_id, "key": f"pk_{copy_id}", "form_id": form_id})
    return made


def seed(url: str, workspace_id: str, form_ids: list[str], rows: int) -> str:
    """Every form's rows; the id of the submission whose page is timed."""
    with psycopg.connect(url, autocommit=True) as conn:
        big, *others = form_ids
        params = {"form_id": big, "workspace_id": workspace_id}
        conn.execute(_SEED, {**params, "rows": rows, "span": SPAN_SECONDS})
        for index, form_id in enumerate(others, start=1):
            other = {"form_id": form_id, "workspace_id": workspace_id, "rows": OTHER_ROWS}
            conn.execute(_SEED_OTHER, {**other, "offset": rows + index * OTHER_ROWS})
        conn.execute(_SEED_DEAD, {"form_id": big})
        shown = conn.execute(_SHOWN, {"form_id": big}).fetchone()
        if shown is None:  # too few rows for a dead delivery: the oldest one
            shown = conn.execute(_FIRST, {"form_id": big}).fetchone()
        conn.execute("VACUUM (ANALYZE)")
        conn.execute("CHECKPOINT")
    if shown is None or shown[0] is None:
        raise RuntimeError("the dashboard bench seeded no submission")
    return str(shown[0])
