-- 0010_submission_search: the search of a form's submissions (`q`), made fast on large
-- forms by a trigram index. The listing's order needs nothing new: submissions_form
-- (form_id, submission_id) is read backwards for newest first.

-- Trigram operator classes for the GIN index below (a trusted extension). Where it is
-- installed already, it stays in its schema, which need not be on the search_path.
CREATE EXTENSION IF NOT EXISTS pg_trgm
;

-- What a search looks in, as domain/listing.py's search_text says: every text value of
-- the data at any depth (never a field's name, a number or a boolean), lowered, one per
-- line. A search holds no line break, so it never matches across two values. IMMUTABLE:
-- it reads nothing but its argument (lower() follows the database's fixed ctype), so an
-- index may hold it.
-- The json column keeps an escaped NUL (\u0000), which jsonb refuses: such escapes are
-- dropped before the cast (an even run of backslashes before one is the text's own), so
-- no stored row can make this fail. The domain refuses NUL in what it accepts anyway.
CREATE FUNCTION intake_search_text(data json) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT coalesce(string_agg(lower(item #>> '{}'), E'\n'), '')
    FROM jsonb_path_query(
        CASE WHEN strpos(data::text, '\u0000') = 0 THEN data::text
        ELSE regexp_replace(data::text, '(?<!\\)((?:\\\\)*)\\u0000', '\1', 'g')
        END::jsonb,
        'strict $.**'
    ) AS item
    WHERE jsonb_typeof(item) = 'string'
$$
;

-- The search text kept beside the data, written with each row whatever writes it (so
-- intake_commit is unchanged): a search's index candidates are checked against this
-- text, not by parsing each row's data again, which on a large form is what keeps a
-- search finding thousands of rows fast. It costs the size of the values once more.
ALTER TABLE submissions
    ADD COLUMN search_text text GENERATED ALWAYS AS (intake_search_text(data)) STORED
;

-- LIKE '%text%' on the search text, for a search of three characters or more: the
-- planner weighs it against reading the form's rows newest first and stopping at a page.
-- The operator class is named in the extension's own schema, wherever that is.
DO $$
DECLARE
    trgm_schema name := (
        SELECT n.nspname FROM pg_extension AS e
        JOIN pg_namespace AS n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm'
    );
BEGIN
    EXECUTE format(
        'CREATE INDEX submissions_search ON submissions USING gin (search_text %I.gin_trgm_ops)',
        trgm_schema
    );
END
$$
;
