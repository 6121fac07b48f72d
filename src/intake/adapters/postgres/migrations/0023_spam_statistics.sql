-- 0023_spam_statistics

-- The learning filter's statistics (docs/scoring.md): one row a scope, a workspace's
-- (its id) or the instance's (''), with how many messages it was taught of each label.
-- `generation` grows with every change to the scope, so that a process asks for what
-- changed since the generation it holds.
CREATE TABLE spam_scopes (
    scope text COLLATE "C" PRIMARY KEY,
    spam_messages bigint NOT NULL DEFAULT 0,
    ham_messages bigint NOT NULL DEFAULT 0,
    generation bigint NOT NULL DEFAULT 0
)
;

-- A token's counts in a scope: `token` is its keyed hash (never a readable value). A row
-- whose counts fall to zero stays, with the generation that zeroed it, so that the
-- processes holding it hear that it went.
CREATE TABLE spam_tokens (
    scope text COLLATE "C" NOT NULL,
    token bigint NOT NULL,
    spam integer NOT NULL DEFAULT 0,
    ham integer NOT NULL DEFAULT 0,
    generation bigint NOT NULL,
    PRIMARY KEY (scope, token)
)
;

-- What changed in a scope since a generation: a process's refresh.
CREATE INDEX spam_tokens_generation ON spam_tokens (scope, generation)
;

-- What a submission teaches now ('spam', 'ham'; NULL: nothing), set by an owner's triage
-- and the rule for untouched submissions, never by a commit. Nullable without a default:
-- no row is rewritten by the ALTER itself, and a commit writes nothing more.
ALTER TABLE submissions ADD COLUMN taught text COLLATE "C"
;
