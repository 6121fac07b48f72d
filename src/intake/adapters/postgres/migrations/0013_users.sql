-- 0013_users

-- Workspace users (docs/dashboard.md). The address is kept lower-case, so that one
-- person is one user; the password is an argon2id string, NULL until set by a link.
CREATE TABLE users (
    user_id       text COLLATE "C" PRIMARY KEY,
    email         text COLLATE "C" NOT NULL UNIQUE,
    password_hash text,
    created_at    timestamptz NOT NULL
)
;

CREATE TABLE memberships (
    user_id      text COLLATE "C" NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (workspace_id),
    role         text NOT NULL CHECK (role IN ('owner', 'member')),
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (user_id, workspace_id)
)
;

CREATE INDEX memberships_workspace ON memberships (workspace_id, created_at, user_id)
;

-- One-time sign-in links, kept as the SHA-256 of their secret.
CREATE TABLE sign_in_tokens (
    token_hash bytea PRIMARY KEY,
    user_id    text COLLATE "C" NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
)
;

CREATE INDEX sign_in_tokens_user ON sign_in_tokens (user_id)
;

-- Dashboard sessions, found by the SHA-256 of the cookie's secret; deleted to end one.
CREATE TABLE sessions (
    session_id   text COLLATE "C" PRIMARY KEY,
    token_hash   bytea NOT NULL UNIQUE,
    user_id      text COLLATE "C" NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
)
;

CREATE INDEX sessions_user ON sessions (user_id)
;
