-- 0025_akismet_reports

-- A delivery may now go to the operator's Akismet: an owner's triage, reported
-- (docs/scoring.md, "Akismet").
ALTER TABLE deliveries DROP CONSTRAINT deliveries_kind_check
;

ALTER TABLE deliveries ADD CONSTRAINT deliveries_kind_check
    CHECK (kind IN ('webhook', 'email', 'chat', 'akismet'))
;
