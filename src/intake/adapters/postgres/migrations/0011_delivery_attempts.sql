-- 0011_delivery_attempts

-- Each attempt at a delivery, oldest first by attempt_id: when, how it ended,
-- the receiver's HTTP status (webhooks) or a short error. Never the URL nor
-- the payload. Written in the statement that records the outcome; goes with
-- its delivery (purge, a removed endpoint's undelivered deliveries, erasure).
            CREATE TABLE delivery_attempts (
                attempt_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                delivery_id  text COLLATE "C" NOT NULL
                             REFERENCES deliveries (delivery_id) ON DELETE CASCADE,
                attempted_at timestamptz NOT NULL,
                outcome      text COLLATE "C" NOT NULL
                             CHECK (outcome IN ('delivered', 'failed')),
                status_code  integer,
                error        text
            )
;

-- A delivery's attempts, in order; also the cascade's lookup.
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, attempt_id)
;

-- An endpoint's deliveries, newest first (GET /v1/webhooks/{id}/deliveries).
            CREATE INDEX deliveries_destination
                ON deliveries (destination_id, created_at, delivery_id)
;
