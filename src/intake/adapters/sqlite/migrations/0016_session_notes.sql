-- 0016_session_notes

-- What a dashboard session is shown once on the page a post leads to (a new API key, a
-- new endpoint's signing secret), between the post and that page: sealed, read once
-- (deleted as it is read), gone with its session or once expired.
CREATE TABLE session_notes (
    session_id TEXT PRIMARY KEY REFERENCES sessions (session_id) ON DELETE CASCADE,
    note       TEXT NOT NULL,
    expires_at TEXT NOT NULL
) WITHOUT ROWID
;
