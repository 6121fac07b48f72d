-- 0020_form_created_status

-- The dashboard's counts of a form's submissions by day and status read a range of
-- this index per form: with the status its last column, the range is read alone, never
-- the rows themselves. It takes the place of 0014's index of the first two columns,
-- which the retention sweep reads as before.
DROP INDEX submissions_form_created
;
CREATE INDEX submissions_form_created ON submissions (form_id, created_at, status)
;
