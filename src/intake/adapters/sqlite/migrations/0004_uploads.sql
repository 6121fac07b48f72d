-- 0004_uploads

-- A form's upload policy, as a JSON object; NULL: uploads off, as for every
-- form made before.
ALTER TABLE forms ADD COLUMN uploads TEXT
;

-- A submission's files, a JSON array (StoredFile.to_json): the row links its
-- blobs, written in the commit's transaction. Existing rows have none. Adding
-- a column with a constant default rewrites no row.
ALTER TABLE submissions ADD COLUMN files TEXT NOT NULL DEFAULT '[]'
;

-- Secrets the processes share, made by the first that needs one (the key
-- that signs download links).
            CREATE TABLE secrets (
                name       TEXT PRIMARY KEY,
                value      BLOB NOT NULL,
                created_at TEXT NOT NULL
            ) WITHOUT ROWID
;
