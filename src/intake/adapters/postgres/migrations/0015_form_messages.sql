-- 0015_form_messages

-- A form's own mail templates and its switches (mail notifications,
-- autoresponse and its hourly limit, forward only), as a JSON object; NULL:
-- every default, as for every form made before.
ALTER TABLE forms ADD COLUMN messages jsonb
;

-- The confirmations queued to submitters, one per submission at most: what
-- the autoresponder's two limits count, in the fan-out's transaction, under
-- an advisory lock on the form. The address is kept as a hash only. No
-- foreign key to the event: a record outlives the purge of its event, so the
-- past hour is always counted whole.
            CREATE TABLE autoresponses (
                autoresponse_id text COLLATE "C" PRIMARY KEY,
                form_id         text COLLATE "C" NOT NULL
                                REFERENCES forms (form_id) ON DELETE CASCADE,
                event_id        text COLLATE "C" NOT NULL,
                address_hash    text COLLATE "C" NOT NULL,
                queued_at       timestamptz NOT NULL
            )
;

-- The form's ceiling: its confirmations in the past hour.
CREATE INDEX autoresponses_form ON autoresponses (form_id, queued_at)
;

-- One per address per form per hour.
CREATE INDEX autoresponses_address ON autoresponses (form_id, address_hash, queued_at)
;

-- Submissions of forward-only forms waiting to be erased once every delivery
-- of their events is done: queued by the fan-out, in its transaction, so a
-- relay that dies after a delivery leaves the erasure to the next one.
            CREATE TABLE forward_erasures (
                submission_id text COLLATE "C" PRIMARY KEY
                              REFERENCES submissions (submission_id) ON DELETE CASCADE,
                queued_at     timestamptz NOT NULL
            )
;
