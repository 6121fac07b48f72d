-- 0023_akismet_reports

-- A delivery may now go to the operator's Akismet: an owner's triage, reported
-- (docs/scoring.md, "Akismet"). SQLite cannot change a CHECK, so `deliveries`
-- is made anew (as 0012 left it, 'akismet' added to its kinds) and its rows
-- copied. Dropping the old table would delete its
-- attempts (the foreign key's cascade, which cannot be turned off inside the
-- migration's transaction), so they are kept aside first and put back after,
-- ids and all.
            CREATE TABLE deliveries_next (
                delivery_id     TEXT PRIMARY KEY,
                event_id        TEXT NOT NULL REFERENCES outbox (event_id) ON DELETE CASCADE,
                kind            TEXT NOT NULL CHECK (kind IN ('webhook', 'email', 'chat', 'akismet')),
                destination_id  TEXT NOT NULL,
                state           TEXT NOT NULL
                                CHECK (state IN ('pending', 'delivered', 'dead')),
                attempts        INTEGER NOT NULL CHECK (attempts >= 0),
                next_attempt_at TEXT,
                leased_until    TEXT,
                last_error      TEXT,
                delivered_at    TEXT,
                dead_at         TEXT,
                created_at      TEXT NOT NULL,
                UNIQUE (event_id, kind, destination_id),
                CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL))
            )
;

INSERT INTO deliveries_next SELECT
    delivery_id, event_id, kind, destination_id, state, attempts, next_attempt_at,
    leased_until, last_error, delivered_at, dead_at, created_at
FROM deliveries
;

CREATE TABLE delivery_attempts_kept AS SELECT
    attempt_id, delivery_id, attempted_at, outcome, status_code, error
FROM delivery_attempts
;

DROP TABLE delivery_attempts
;

DROP TABLE deliveries
;

ALTER TABLE deliveries_next RENAME TO deliveries
;

            CREATE TABLE delivery_attempts (
                attempt_id   INTEGER PRIMARY KEY AUTOINCREMENT,
                delivery_id  TEXT NOT NULL
                             REFERENCES deliveries (delivery_id) ON DELETE CASCADE,
                attempted_at TEXT NOT NULL,
                outcome      TEXT NOT NULL CHECK (outcome IN ('delivered', 'failed')),
                status_code  INTEGER,
                error        TEXT
            )
;

INSERT INTO delivery_attempts (
    attempt_id, delivery_id, attempted_at, outcome, status_code, error
) SELECT attempt_id, delivery_id, attempted_at, outcome, status_code, error
FROM delivery_attempts_kept
;

DROP TABLE delivery_attempts_kept
;

-- The indexes of 0012, which went with the old tables.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, delivery_id)
    WHERE next_attempt_at IS NOT NULL
;

CREATE INDEX deliveries_dead ON deliveries (created_at, delivery_id)
    WHERE state = 'dead'
;

CREATE INDEX deliveries_destination ON deliveries (destination_id, created_at, delivery_id)
;

CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, attempt_id)
;
