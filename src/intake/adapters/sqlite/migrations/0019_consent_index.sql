-- 0019_consent_index

-- A workspace's consent mails (`mail.confirm`) of the past hour, which its consent
-- windows count when one more is queued: partial, so it holds those rows alone.
CREATE INDEX outbox_consent ON outbox (workspace_id, created_at)
    WHERE event_type = 'mail.confirm'
;
