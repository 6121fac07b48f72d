-- repeatable/intake_search_text: what a search looks in, as domain/listing.py's
-- search_text says: every text value of the data at any depth (never a field's name, a
-- number or a boolean), lowered, one per line. A search holds no line break, so it never
-- matches across two values. IMMUTABLE: it reads nothing but its argument (lower()
-- follows the database's fixed ctype), so the stored column search_text (0010) and its
-- index may hold it.
-- The json column keeps an escaped NUL (\u0000), which jsonb refuses: such escapes are
-- dropped before the cast (an even run of backslashes before one is the text's own), so
-- no stored row can make this fail. The domain refuses NUL in what it accepts anyway.
-- PL/pgSQL, not SQL as 0010 made it: a SQL function called for a generated column is
-- parsed and planned again by each INSERT that computes it, a commit's, which cost as
-- much as the rest of the row's insert (docs/performance.md); PL/pgSQL keeps the plan of
-- its query for the connection's life. The same text for the same data.
CREATE OR REPLACE FUNCTION intake_search_text(data json) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $function$
BEGIN
    RETURN (
        SELECT coalesce(string_agg(lower(item #>> '{}'), E'\n'), '')
        FROM jsonb_path_query(
            CASE WHEN strpos(data::text, '\u0000') = 0 THEN data::text
            ELSE regexp_replace(data::text, '(?<!\\)((?:\\\\)*)\\u0000', '\1', 'g')
            END::jsonb,
            'strict $.**'
        ) AS item
        WHERE jsonb_typeof(item) = 'string'
    );
END
$function$
;
