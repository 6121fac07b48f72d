"""`Admin`, the management use cases: one class made of a part per concern."""

from __future__ import annotations

from intake.service.admin.destinations import DestinationAdmin
from intake.service.admin.keys import KeyAdmin
from intake.service.admin.outbox import OutboxAdmin
from intake.service.admin.submissions import SubmissionAdmin


class Admin(SubmissionAdmin, DestinationAdmin, KeyAdmin, OutboxAdmin):
    """Workspaces, forms, API keys, submissions, and where submissions are delivered.
    Each part is in the module of its concern; all of them share `AdminBase`'s store,
    clock and settings."""
