-- 0009_key_scopes

-- What each key may do, space-separated in the order submit, read, manage
-- (management-api.md). Keys made before scopes keep what they did: submit.
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'submit'
;
