"""`Admin`, the management use cases: one class made of a part per concern."""

from __future__ import annotations

from intake.service.admin.activity import ActivityAdmin
from intake.service.admin.chat_destinations import ChatAdmin
from intake.service.admin.consent import ConsentAdmin
from intake.service.admin.delivery_targets import DeliveryTargetAdmin
from intake.service.admin.destinations import DestinationAdmin
from intake.service.admin.erasure import ErasureAdmin
from intake.service.admin.form_lifecycle import FormLifecycleAdmin
from intake.service.admin.keys import KeyAdmin
from intake.service.admin.listing import ListingAdmin
from intake.service.admin.outbox import OutboxAdmin
from intake.service.admin.ownership import OwnershipAdmin
from intake.service.admin.spam_filter import SpamFilterAdmin
from intake.service.admin.submissions import SubmissionAdmin
from intake.service.admin.webhooks import WebhookAdmin
from intake.service.admin.workspace_forms import WorkspaceFormAdmin


class Admin(
    ConsentAdmin,
    ChatAdmin,
    WebhookAdmin,
    DeliveryTargetAdmin,
    ListingAdmin,
    SubmissionAdmin,
    DestinationAdmin,
    KeyAdmin,
    OutboxAdmin,
    WorkspaceFormAdmin,
    OwnershipAdmin,
    ErasureAdmin,
    FormLifecycleAdmin,
    ActivityAdmin,
    SpamFilterAdmin,
):
    """Workspaces, forms, API keys, submissions, and where submissions are delivered.
    Each part is in the module of its concern; all of them share `AdminBase`'s store,
    clock and settings."""
