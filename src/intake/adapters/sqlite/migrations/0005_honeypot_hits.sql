-- 0005_honeypot_hits

-- A form's filled honeypots, counted by day: what a caught bot writes in
-- place of a submission, so that its answer costs a real commit's time.
            CREATE TABLE honeypot_hits (
                form_id TEXT NOT NULL REFERENCES forms (form_id),
                day     TEXT NOT NULL,  -- YYYY-MM-DD, UTC
                count   INTEGER NOT NULL CHECK (count > 0),
                PRIMARY KEY (form_id, day)
            ) WITHOUT ROWID
;
