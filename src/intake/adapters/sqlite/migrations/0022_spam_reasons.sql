-- 0022_spam_reasons

-- Why a submission scored as it did (domain/model.py's Submission.spam_reasons): a
-- compact JSON array of at most 12 short strings, for the owner only. The earlier rows
-- read as having none.
ALTER TABLE submissions ADD COLUMN spam_reasons TEXT NOT NULL DEFAULT '[]'
;
