-- 0024_spam_reasons

-- Why a submission scored as it did (domain/model.py's Submission.spam_reasons): a
-- compact JSON array of at most 12 short strings, for the owner only. A constant
-- default: no row is rewritten, the earlier rows read as having none.
ALTER TABLE submissions ADD COLUMN spam_reasons text NOT NULL DEFAULT '[]'
;

-- intake_commit: its live definition is in repeatable/intake_commit.sql.
