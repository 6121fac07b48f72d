"""The owner-side services: workspaces, forms, API keys, submissions and their triage,
exports, erasure on request, and where submissions are delivered (webhook endpoints,
notification recipients, chat destinations, the deliveries and the outbox); one class a
concern, all built by `owner_services` into `OwnerServices`. The other names are what
they take and give. How they are printed is `intake.presentation`'s.

Each name is imported from its module when first asked for: a command that uses one
service does not load every other (services.py)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

# Each name's module.
_HOMES = {
    "ActivityCounts": "activity",
    "FormChanges": "changes",
    "UNSET": "changes",
    "Unset": "changes",
    "UploadChanges": "changes",
    "WorkspaceChanges": "changes",
    "ChatRequest": "chat_destinations",
    "Chats": "chat_destinations",
    "Deliveries": "deliveries",
    "DeliveryPage": "deliveries",
    "DeliveryTargets": "delivery_targets",
    "ErasedSubmission": "erasure",
    "ErasureReceipt": "erasure",
    "Privacy": "erasure",
    "AdminError": "errors",
    "NotFoundError": "errors",
    "TooSoon": "errors",
    "WorkspaceSuspended": "errors",
    "CsvRow": "exports",
    "Exports": "exports",
    "Forms": "forms",
    "DEFAULT_FORM_NAME": "inputs",
    "MAX_FORM_NAME": "inputs",
    "challenge_of": "inputs",
    "parse_rule": "inputs",
    "CreatedKey": "keys",
    "Keys": "keys",
    "COUNT_LIMIT": "listing",
    "InboxPage": "listing",
    "Listed": "listing",
    "SubmissionDetail": "listing",
    "Submissions": "listing",
    "submission_filter": "listing",
    "MessageChanges": "message_changes",
    "Outbox": "outbox",
    "ConsentAsked": "recipients",
    "Recipients": "recipients",
    "OwnerServices": "services",
    "owner_services": "services",
    "SpamFilter": "spam_filter",
    "Triage": "triage",
    "CreatedEndpoint": "webhooks",
    "Webhooks": "webhooks",
    "WorkspaceUsage": "workspaces",
    "Workspaces": "workspaces",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # found at once the next time
    return value
