"""Management use cases: workspaces, forms, API keys, submissions, and where submissions
are delivered (webhook endpoints, notification recipients, the outbox). `Admin` holds them
all; the other names are what it takes and gives. How they are printed is
`intake.presentation`'s."""

from __future__ import annotations

from intake.service.admin.changes import (
    UNSET,
    FormChanges,
    Unset,
    UploadChanges,
    WorkspaceChanges,
)
from intake.service.admin.chat_destinations import ChatRequest
from intake.service.admin.delivery_targets import DeliveryTargets
from intake.service.admin.destinations import CreatedEndpoint
from intake.service.admin.erasure import ErasedSubmission, ErasureReceipt
from intake.service.admin.errors import AdminError, NotFoundError, WorkspaceSuspended
from intake.service.admin.inputs import (
    DEFAULT_FORM_NAME,
    MAX_FORM_NAME,
    challenge_of,
    parse_rule,
)
from intake.service.admin.keys import CreatedKey
from intake.service.admin.listing import COUNT_LIMIT, InboxPage, Listed, submission_filter
from intake.service.admin.outbox import Outbox
from intake.service.admin.service import Admin
from intake.service.admin.submissions import CsvRow
from intake.service.admin.webhooks import DeliveryPage, SubmissionDetail
from intake.service.admin.workspaces import WorkspaceUsage

__all__ = [
    "COUNT_LIMIT",
    "DEFAULT_FORM_NAME",
    "MAX_FORM_NAME",
    "UNSET",
    "Admin",
    "AdminError",
    "ChatRequest",
    "CreatedEndpoint",
    "CreatedKey",
    "CsvRow",
    "DeliveryPage",
    "DeliveryTargets",
    "ErasedSubmission",
    "ErasureReceipt",
    "FormChanges",
    "InboxPage",
    "Listed",
    "NotFoundError",
    "Outbox",
    "SubmissionDetail",
    "Unset",
    "UploadChanges",
    "WorkspaceChanges",
    "WorkspaceSuspended",
    "WorkspaceUsage",
    "challenge_of",
    "parse_rule",
    "submission_filter",
]
