-- 0009_delivery_attempts

-- Each attempt at a delivery, oldest first by attempt_id: when, how it ended,
-- the receiver's HTTP status (webhooks) or a short error. Never the URL nor
-- the payload. Written in the transaction that records the outcome; goes with
-- its delivery (purge, a removed endpoint's undelivered deliveries, erasure).
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

-- A delivery's attempts, in order; also the cascade's lookup.
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, attempt_id)
;

-- An endpoint's deliveries, newest first (GET /v1/webhooks/{id}/deliveries).
            CREATE INDEX deliveries_destination
                ON deliveries (destination_id, created_at, delivery_id)
;
