-- 0017_recipient_consent

-- Whether a notification recipient asked for the mail: `pending` until they confirm
-- through the link of the one mail they get, `declined` if they refused it (kept, so
-- the form cannot add them again unnoticed). Recipients made before are `confirmed`:
-- their owners added them when intake asked nobody.
ALTER TABLE notification_recipients ADD COLUMN status TEXT NOT NULL DEFAULT 'confirmed'
    CHECK (status IN ('pending', 'confirmed', 'declined'))
;

-- The SHA-256 (hex) of the secret in a pending recipient's link; NULL once answered.
ALTER TABLE notification_recipients ADD COLUMN confirm_hash TEXT
;

CREATE UNIQUE INDEX notification_recipients_confirm ON notification_recipients (confirm_hash)
    WHERE confirm_hash IS NOT NULL
;
