-- 0005_form_changes

-- Every serving process keeps its form lookups until it hears of a change
-- (adapters/form_cache.py). Once per statement: one notification for a
-- statement that changes many rows, and the same payload within one
-- transaction is sent once. Only the rare admin changes pay for it: a
-- submission's commit writes neither table.
            CREATE FUNCTION intake_forms_changed() RETURNS trigger
            LANGUAGE plpgsql AS $function$
            BEGIN
                PERFORM pg_notify('intake_forms', '');
                RETURN NULL;
            END
            $function$
;

            CREATE TRIGGER forms_changed
                AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON forms
                FOR EACH STATEMENT EXECUTE FUNCTION intake_forms_changed()
;

            CREATE TRIGGER workspaces_changed
                AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON workspaces
                FOR EACH STATEMENT EXECUTE FUNCTION intake_forms_changed()
;
