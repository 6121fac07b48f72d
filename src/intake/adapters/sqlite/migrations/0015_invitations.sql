-- 0015_invitations

-- Owners' invitations (docs/dashboard.md, "Invitations"): one per workspace and address,
-- made again in place by a new invitation or a resend. A membership is made only when the
-- invited user accepts. Its link's secret is kept as its SHA-256. An invitation goes with
-- its workspace and with the user who sent it.
CREATE TABLE invitations (
    invitation_id TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (workspace_id),
    email         TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('owner', 'member')),
    invited_by    TEXT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    token_hash    BLOB NOT NULL UNIQUE,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    status        TEXT NOT NULL
        CHECK (status IN ('pending', 'accepted', 'declined', 'revoked')),
    UNIQUE (workspace_id, email)
)
;

-- A signed-in user's pending invitations, by their address.
CREATE INDEX invitations_email ON invitations (email, created_at)
;

CREATE INDEX invitations_invited_by ON invitations (invited_by)
;
