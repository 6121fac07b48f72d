-- 0003_delivery

-- A form's destinations go with the form.
            CREATE TABLE webhook_endpoints (
                endpoint_id     text COLLATE "C" PRIMARY KEY,
                form_id         text COLLATE "C" NOT NULL
                                REFERENCES forms (form_id) ON DELETE CASCADE,
                url             text NOT NULL,
                secret          text NOT NULL,
                include_flagged boolean NOT NULL,
                created_at      timestamptz,
                disabled_at     timestamptz
            )
;

-- A form's endpoints, for the fan-out and the listing (in its order).
            CREATE INDEX webhook_endpoints_form
                ON webhook_endpoints (form_id, created_at NULLS FIRST, endpoint_id)
;

-- The unique index serves the fan-out's lookup by form as well.
            CREATE TABLE notification_recipients (
                recipient_id text COLLATE "C" PRIMARY KEY,
                form_id      text COLLATE "C" NOT NULL
                             REFERENCES forms (form_id) ON DELETE CASCADE,
                email        text NOT NULL,
                created_at   timestamptz,
                UNIQUE (form_id, email)
            )
;

-- One event on its way to one destination. The unique triple makes the
-- fan-out idempotent, and its index serves the lookups by event (retry,
-- the purge's check, the cascade). No foreign key to the destination: a
-- removed endpoint leaves its deliveries as they were. Delivery state lives
-- here: the outbox's attempts, next_attempt_at, last_error and dead_at of
-- 0001 are left unused. Room on the page keeps a lease, which changes no
-- indexed column, a HOT update (no index entries to write).
            CREATE TABLE deliveries (
                delivery_id     text COLLATE "C" PRIMARY KEY,
                event_id        text COLLATE "C" NOT NULL
                                REFERENCES outbox (event_id) ON DELETE CASCADE,
                kind            text COLLATE "C" NOT NULL
                                CHECK (kind IN ('webhook', 'email')),
                destination_id  text COLLATE "C" NOT NULL,
                state           text COLLATE "C" NOT NULL
                                CHECK (state IN ('pending', 'delivered', 'dead')),
                attempts        integer NOT NULL CHECK (attempts >= 0),
                next_attempt_at timestamptz,
                leased_until    timestamptz,
                last_error      text,
                delivered_at    timestamptz,
                dead_at         timestamptz,
                created_at      timestamptz NOT NULL,
                UNIQUE (event_id, kind, destination_id),
                CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL))
            ) WITH (fillfactor = 80)
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
