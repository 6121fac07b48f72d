-- 0018_form_deletion

-- When an owner deleted the form (docs/api.md, "Deleting a form"); NULL: it is live.
-- A deleted form is found by no lookup at once; its row stays, disabled, while its
-- submissions are erased and their `submission.deleted` events reach its webhook
-- endpoints, then goes with its destinations.
ALTER TABLE forms ADD COLUMN deleted_at TEXT
;

-- `intake purge` finishes the deletions left unfinished: it finds them by this index.
CREATE INDEX forms_deleted ON forms (form_id) WHERE deleted_at IS NOT NULL
;
