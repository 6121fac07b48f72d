-- 0003_delivery

-- A form's destinations go with the form.
            CREATE TABLE webhook_endpoints (
                endpoint_id     TEXT PRIMARY KEY,
                form_id         TEXT NOT NULL REFERENCES forms (form_id) ON DELETE CASCADE,
                url             TEXT NOT NULL,
                secret          TEXT NOT NULL,
                include_flagged INTEGER NOT NULL CHECK (include_flagged IN (0, 1)),
                created_at      TEXT,
                disabled_at     TEXT
            )
;

-- A form's endpoints, for the fan-out and the listing (in its order).
            CREATE INDEX webhook_endpoints_form
                ON webhook_endpoints (form_id, created_at, endpoint_id)
;

-- The unique index serves the fan-out's lookup by form as well.
            CREATE TABLE notification_recipients (
                recipient_id TEXT PRIMARY KEY,
                form_id      TEXT NOT NULL REFERENCES forms (form_id) ON DELETE CASCADE,
                email        TEXT NOT NULL,
                created_at   TEXT,
                UNIQUE (form_id, email)
            )
;

-- One event on its way to one destination. The unique triple makes the
-- fan-out idempotent, and its index serves the lookups by event (retry,
-- the purge's check, the cascade). No foreign key to the destination: a
-- removed endpoint leaves its deliveries as they were. Delivery state lives
-- here: the outbox's attempts, next_attempt_at, last_error and dead_at of
-- 0001 are left unused.
            CREATE TABLE deliveries (
                delivery_id     TEXT PRIMARY KEY,
                event_id        TEXT NOT NULL REFERENCES outbox (event_id) ON DELETE CASCADE,
                kind            TEXT NOT NULL CHECK (kind IN ('webhook', 'email')),
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

-- The relay's claim: pending deliveries, earliest due first. Partial, so the
-- delivered and dead (most rows, soon) cost it nothing. Said by
-- next_attempt_at, which is set exactly when pending (the CHECK above), not
-- by state: a query then asks one column, `next_attempt_at <= now`, and the
-- planner estimates its rows right (two correlated columns it would
-- multiply, and sort a large backlog rather than read it in order).
            CREATE INDEX deliveries_due ON deliveries (next_attempt_at, delivery_id)
                WHERE next_attempt_at IS NOT NULL
;

-- `intake outbox list --dead`, newest first.
            CREATE INDEX deliveries_dead ON deliveries (created_at, delivery_id)
                WHERE state = 'dead'
;
