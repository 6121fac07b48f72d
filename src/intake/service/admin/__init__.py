"""Management use cases: workspaces, forms, API keys, submissions, and where submissions
are delivered (webhook endpoints, notification recipients, the outbox). `Admin` holds them
all; the other names are what it takes, gives and prints."""

from __future__ import annotations

from intake.service.admin.destinations import CreatedEndpoint
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.exports import (
    CSV_FILE_SEPARATOR,
    CSV_FILES_COLUMN,
    CSV_FIXED_COLUMNS,
    csv_export,
    csv_header,
    csv_line,
    csv_record,
    jsonl_line,
)
from intake.service.admin.inputs import (
    DEFAULT_FORM_NAME,
    MAX_FORM_NAME,
    UploadChanges,
    challenge_of,
    parse_rule,
)
from intake.service.admin.keys import CreatedKey
from intake.service.admin.outbox import Outbox
from intake.service.admin.service import Admin
from intake.service.admin.submissions import CsvLine
from intake.service.admin.views import (
    delivery_view,
    endpoint_view,
    form_view,
    key_view,
    outbox_event_view,
    recipient_view,
    submission_view,
    workspace_view,
)
from intake.service.admin.workspaces import WorkspaceUsage

__all__ = [
    "CSV_FILES_COLUMN",
    "CSV_FILE_SEPARATOR",
    "CSV_FIXED_COLUMNS",
    "DEFAULT_FORM_NAME",
    "MAX_FORM_NAME",
    "Admin",
    "AdminError",
    "CreatedEndpoint",
    "CreatedKey",
    "CsvLine",
    "NotFoundError",
    "Outbox",
    "UploadChanges",
    "WorkspaceUsage",
    "challenge_of",
    "csv_export",
    "csv_header",
    "csv_line",
    "csv_record",
    "delivery_view",
    "endpoint_view",
    "form_view",
    "jsonl_line",
    "key_view",
    "outbox_event_view",
    "parse_rule",
    "recipient_view",
    "submission_view",
    "workspace_view",
]
