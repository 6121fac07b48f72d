-- 0026_search_text_sent

-- The search text is no longer computed from the data by PostgreSQL on every insert: a
-- commit sends the data's text values, which the server process has in hand, and
-- PostgreSQL only lowers them (repeatable/intake_commit.sql). Parsing the JSON again to
-- walk its values cost a sixth of a commit's CPU (docs/performance.md). The column
-- keeps the values it holds; no row is rewritten.
ALTER TABLE submissions ALTER COLUMN search_text DROP EXPRESSION
;

-- Any other insert (an older server's commit during an upgrade, rows made by hand) gets
-- the text from its data as before. A commit's row, which has its text, pays for the
-- WHEN test alone.
    CREATE FUNCTION intake_fill_search_text() RETURNS trigger
    LANGUAGE plpgsql
    AS $function$
    BEGIN
        NEW.search_text := intake_search_text(NEW.data);
        RETURN NEW;
    END
    $function$
;

            CREATE TRIGGER submissions_search_text
                BEFORE INSERT ON submissions
                FOR EACH ROW
                WHEN (NEW.search_text IS NULL)
                EXECUTE FUNCTION intake_fill_search_text()
;
