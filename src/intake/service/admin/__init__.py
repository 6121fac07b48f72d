"""The owner-side services: workspaces, forms, API keys, submissions and their triage,
exports, erasure on request, and where submissions are delivered (webhook endpoints,
notification recipients, chat destinations, the deliveries and the outbox); one class a
concern, all built by `owner_services` into `OwnerServices`. The other names are what
they take and give. How they are printed is `intake.presentation`'s."""

from __future__ import annotations

from intake.service.admin.activity import ActivityCounts
from intake.service.admin.changes import (
    UNSET,
    FormChanges,
    Unset,
    UploadChanges,
    WorkspaceChanges,
)
from intake.service.admin.chat_destinations import ChatRequest, Chats
from intake.service.admin.deliveries import Deliveries, DeliveryPage
from intake.service.admin.delivery_targets import DeliveryTargets
from intake.service.admin.erasure import ErasedSubmission, ErasureReceipt, Privacy
from intake.service.admin.errors import AdminError, NotFoundError, TooSoon, WorkspaceSuspended
from intake.service.admin.exports import CsvRow, Exports
from intake.service.admin.forms import Forms
from intake.service.admin.inputs import (
    DEFAULT_FORM_NAME,
    MAX_FORM_NAME,
    challenge_of,
    parse_rule,
)
from intake.service.admin.keys import CreatedKey, Keys
from intake.service.admin.listing import (
    COUNT_LIMIT,
    InboxPage,
    Listed,
    SubmissionDetail,
    Submissions,
    submission_filter,
)
from intake.service.admin.message_changes import MessageChanges
from intake.service.admin.outbox import Outbox
from intake.service.admin.recipients import ConsentAsked, Recipients
from intake.service.admin.services import OwnerServices, owner_services
from intake.service.admin.spam_filter import SpamFilter
from intake.service.admin.triage import Triage
from intake.service.admin.webhooks import CreatedEndpoint, Webhooks
from intake.service.admin.workspaces import Workspaces, WorkspaceUsage

__all__ = [
    "COUNT_LIMIT",
    "DEFAULT_FORM_NAME",
    "MAX_FORM_NAME",
    "UNSET",
    "ActivityCounts",
    "AdminError",
    "ChatRequest",
    "Chats",
    "ConsentAsked",
    "CreatedEndpoint",
    "CreatedKey",
    "CsvRow",
    "Deliveries",
    "DeliveryPage",
    "DeliveryTargets",
    "ErasedSubmission",
    "ErasureReceipt",
    "Exports",
    "FormChanges",
    "Forms",
    "InboxPage",
    "Keys",
    "Listed",
    "MessageChanges",
    "NotFoundError",
    "Outbox",
    "OwnerServices",
    "Privacy",
    "Recipients",
    "SpamFilter",
    "SubmissionDetail",
    "Submissions",
    "TooSoon",
    "Triage",
    "Unset",
    "UploadChanges",
    "Webhooks",
    "WorkspaceChanges",
    "WorkspaceSuspended",
    "WorkspaceUsage",
    "Workspaces",
    "challenge_of",
    "owner_services",
    "parse_rule",
    "submission_filter",
]
