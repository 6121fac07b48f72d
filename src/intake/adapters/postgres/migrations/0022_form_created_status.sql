-- 0022_form_created_status

-- The dashboard's counts of a form's submissions by day and status (its charts, the
-- forms list's month) read a range of this index per form: with the status held in it,
-- that range is read alone (an index-only scan), never the rows themselves, which on a
-- large form is most of the time. It takes the place of 0016's index of the same
-- columns, which the retention sweep reads as before: a commit still writes one entry
-- in it, a few bytes longer.
DROP INDEX submissions_form_created
;
CREATE INDEX submissions_form_created ON submissions (form_id, created_at) INCLUDE (status)
;
