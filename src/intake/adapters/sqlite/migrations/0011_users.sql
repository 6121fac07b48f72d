-- 0011_users

-- Workspace users (docs/dashboard.md). The address is kept lower-case, so that one
-- person is one user; the password is an argon2id string, NULL until set by a link.
CREATE TABLE users (
    user_id       TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    created_at    TEXT NOT NULL
)
;

CREATE TABLE memberships (
    user_id      TEXT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
    role         TEXT NOT NULL CHECK (role IN ('owner', 'member')),
    created_at   TEXT NOT NULL,
    PRIMARY KEY (user_id, workspace_id)
) WITHOUT ROWID
;

CREATE INDEX memberships_workspace ON memberships (workspace_id, created_at, user_id)
;

-- One-time sign-in links, kept as the SHA-256 of their secret.
CREATE TABLE sign_in_tokens (
    token_hash BLOB PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT
)
;

CREATE INDEX sign_in_tokens_user ON sign_in_tokens (user_id)
;

-- Dashboard sessions, found by the SHA-256 of the cookie's secret; deleted to end one.
CREATE TABLE sessions (
    session_id   TEXT PRIMARY KEY,
    token_hash   BLOB NOT NULL UNIQUE,
    user_id      TEXT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    created_at   TEXT NOT NULL,
    last_seen_at TEXT NOT NULL,
    expires_at   TEXT NOT NULL
)
;

CREATE INDEX sessions_user ON sessions (user_id)
;
