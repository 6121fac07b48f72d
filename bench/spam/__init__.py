"""`make bench-spam`: intake's learning spam filter against bogofilter, online over the
SpamAssassin public corpus (docs/scoring.md, "Measured")."""
