-- 0006_uploads

-- A form's upload policy, as a JSON object; NULL: uploads off, as for every
-- form made before. jsonb, as the form's other small values.
ALTER TABLE forms ADD COLUMN uploads jsonb
;

-- A submission's files, a JSON array (StoredFile.to_json): the row links its
-- blobs. Existing rows have none. A constant default is kept in the catalog:
-- no row is rewritten, the table is locked only for the change itself.
ALTER TABLE submissions ADD COLUMN files jsonb NOT NULL DEFAULT '[]'::jsonb
;

-- intake_commit: its live definition is in repeatable/intake_commit.sql.

-- Secrets the processes share, made by the first that needs one (the key
-- that signs download links).
            CREATE TABLE secrets (
                name       text COLLATE "C" PRIMARY KEY,
                value      bytea NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )
;
