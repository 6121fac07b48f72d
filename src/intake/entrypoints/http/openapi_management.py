"""The OpenAPI paths of the management API under /v1 (management-api.md): each operation
with the scope it needs, its parameters and body, its answer and every refusal, in the
error table's envelope."""

from __future__ import annotations

from typing import Any

from intake.domain.errors import ErrorCode
from intake.domain.model import Scope
from intake.entrypoints.http.openapi_chat import CHAT_PATHS, CHAT_SCHEMAS
from intake.entrypoints.http.openapi_form_lifecycle import FORM_DELETE, FORM_DUPLICATE
from intake.entrypoints.http.openapi_messages import PREVIEW_PATH
from intake.entrypoints.http.openapi_objects import (
    ERASURE_REQUEST,
    FORM_CHANGE,
    FORM_CREATE,
    OBJECT_SCHEMAS,
    RECIPIENT_CREATE,
    SUBMISSION_CHANGE,
    WEBHOOK_CREATE,
)
from intake.entrypoints.http.openapi_operations import (
    BY_ID,
    FILTERS,
    HEADERS,
    PAGING,
    WITH_QUERY,
    answer,
    operation,
    page,
    path_id,
    ref,
)
from intake.entrypoints.http.openapi_spam import SPAM_PATHS, SPAM_SCHEMAS

_FORM_ID = path_id("form_id", "form")
_SUBMISSION_ID = path_id("submission_id", "submission")
_ENDPOINT_ID = path_id("endpoint_id", "webhook endpoint")
_DELIVERY_ID = path_id("delivery_id", "delivery")
_RECIPIENT_ID = path_id("recipient_id", "mail recipient")

_FORMS = {
    "get": operation(
        "listForms",
        Scope.READ,
        "The workspace's forms, newest first",
        {"200": answer("A page of forms.", page("Form"))},
        parameters=PAGING,
        errors=WITH_QUERY,
    ),
    "post": operation(
        "createForm",
        Scope.MANAGE,
        "Create a form",
        {"201": answer("The new form.", ref("Form"))},
        description="The rules of `intake form create` apply; each bad field is named.",
        body=FORM_CREATE,
    ),
}

_FORM = {
    "parameters": [_FORM_ID],
    "get": operation(
        "getForm", Scope.READ, "A form", {"200": answer("The form.", ref("Form"))}, errors=BY_ID
    ),
    "patch": operation(
        "updateForm",
        Scope.MANAGE,
        "Change a form's settings",
        {"200": answer("The form as it now is.", ref("Form"))},
        description="Only the fields given change; a list given replaces the form's list; "
        "`null` turns the challenge, the redirect or uploads off.",
        body=FORM_CHANGE,
        errors=BY_ID,
    ),
    "delete": FORM_DELETE,
}

_ROTATE_KEY = {
    "parameters": [_FORM_ID],
    "post": operation(
        "rotateFormKey",
        Scope.MANAGE,
        "Give a form a new public key",
        {"200": answer("The form with its new `public_form_key`.", ref("Form"))},
        description="The old key is unknown (`404 form_not_found` on /f/...) at once.",
        errors=BY_ID,
    ),
}

_LIST_SUBMISSIONS = operation(
    "listSubmissions",
    Scope.READ,
    "A form's submissions, newest first, filtered",
    {"200": answer("A page of submissions.", page("Submission"))},
    # In the operation: the path's POST (the submission endpoint) has its own.
    parameters=[_FORM_ID, *FILTERS, *PAGING],
    errors=(*BY_ID, *WITH_QUERY),
)

_EXPORT = {
    "parameters": [_FORM_ID],
    "get": operation(
        "exportSubmissions",
        Scope.READ,
        "A form's submissions as CSV or JSON lines, filtered",
        {
            "200": {
                "description": "Every submission the filters select, streamed, with the "
                "columns of `intake submissions export`. CSV cells that a spreadsheet would "
                "run as a formula are defused.",
                "headers": {
                    **HEADERS,
                    "Content-Disposition": {
                        "required": True,
                        "schema": {"type": "string", "pattern": "^attachment; "},
                    },
                },
                "content": {
                    "text/csv": {"schema": {"type": "string"}},
                    "application/x-ndjson": {"schema": {"type": "string"}},
                },
            }
        },
        acts=True,
        parameters=[
            {
                "name": "format",
                "in": "query",
                "required": False,
                "description": "`csv` (the default) or `jsonl`, one JSON object a line.",
                "schema": {"enum": ["csv", "jsonl"], "default": "csv"},
            },
            *FILTERS,
        ],
        errors=(*BY_ID, *WITH_QUERY),
    ),
}

_SUBMISSION = {
    "parameters": [_SUBMISSION_ID],
    "get": operation(
        "getSubmission",
        Scope.READ,
        "A submission, its files and its deliveries",
        {"200": answer("The submission.", ref("SubmissionDetail"))},
        description="Files carry fresh signed download links; `deliveries` holds every "
        "webhook and mail delivery of its events, each with its attempts.",
        errors=BY_ID,
    ),
    "patch": operation(
        "changeSubmissionStatus",
        Scope.MANAGE,
        "Release a submission, or mark it as spam",
        {"200": answer("The submission as it now is.", ref("Submission"))},
        description="Releasing counts it in this month's usage and sends it to every "
        "destination that takes accepted submissions, once; one accepted before (then "
        "marked as spam) is accepted again without a second charge or "
        "`submission.created`. Marking spam sends nothing. Each teaches the spam filter. "
        "The status it has already confirms it: nothing else changes and nothing is "
        "queued, but the filter learns it (once).",
        body=SUBMISSION_CHANGE,
        errors=BY_ID,
    ),
    "delete": operation(
        "deleteSubmission",
        Scope.MANAGE,
        "Erase a submission",
        {"204": {"description": "Erased, with its files.", "headers": HEADERS}},
        description="Its data, files and idempotency record go, its undelivered "
        "deliveries are dropped, and webhook endpoints get a `submission.deleted` event.",
        errors=BY_ID,
    ),
}

_WEBHOOKS = {
    "parameters": [_FORM_ID],
    "get": operation(
        "listWebhooks",
        Scope.READ,
        "A form's webhook endpoints",
        {"200": answer("A page of them, newest first.", page("WebhookEndpoint"))},
        parameters=PAGING,
        errors=(*BY_ID, *WITH_QUERY),
    ),
    "post": operation(
        "addWebhook",
        Scope.MANAGE,
        "Add a webhook endpoint",
        {"201": answer("The endpoint, with its signing secret.", ref("CreatedWebhookEndpoint"))},
        description="The secret is shown only in this answer. A URL the form has an "
        "endpoint at already is `422` naming `url`: every event would go to it twice. "
        "The endpoint gets only the events queued after it is added.",
        body=WEBHOOK_CREATE,
        errors=BY_ID,
    ),
}

_DELIVERY_ANSWER = answer("The delivery, due now.", ref("Delivery"))

_WEBHOOK = {
    "parameters": [_ENDPOINT_ID],
    "delete": operation(
        "removeWebhook",
        Scope.MANAGE,
        "Remove a webhook endpoint",
        {"204": {"description": "Removed.", "headers": HEADERS}},
        description="Its undelivered deliveries are dropped.",
        errors=BY_ID,
    ),
}

_WEBHOOK_TEST = {
    "parameters": [_ENDPOINT_ID],
    "post": operation(
        "testWebhook",
        Scope.MANAGE,
        "Send a signed webhook.test event to one endpoint",
        {"202": _DELIVERY_ANSWER},
        description="Queued for the relay, for this endpoint only. A disabled endpoint (it "
        "answered 410 Gone) is refused: `422 validation_failed` naming `endpoint_id`.",
        errors=(*BY_ID, ErrorCode.VALIDATION_FAILED),
        throttled=True,
    ),
}

_DELIVERIES = {
    "parameters": [_ENDPOINT_ID],
    "get": operation(
        "listDeliveries",
        Scope.READ,
        "A webhook endpoint's deliveries, newest first",
        {"200": answer("A page of deliveries, with their attempts.", page("Delivery"))},
        parameters=[
            {
                "name": "state",
                "in": "query",
                "required": False,
                "description": "Only deliveries in this state; all when absent.",
                "schema": {"enum": ["pending", "delivered", "dead"]},
            },
            *PAGING,
        ],
        errors=(*BY_ID, *WITH_QUERY),
    ),
}

_RETRY = {
    "parameters": [_DELIVERY_ID],
    "post": operation(
        "retryDelivery",
        Scope.MANAGE,
        "Make a dead or pending delivery due now",
        {"202": _DELIVERY_ANSWER},
        description="A dead delivery gets its attempts afresh. A delivered one cannot be "
        "retried (`422 validation_failed` naming `delivery_id`).",
        errors=(*BY_ID, ErrorCode.VALIDATION_FAILED),
    ),
}

_RETRY_DEAD = {
    "parameters": [_ENDPOINT_ID],
    "post": operation(
        "retryDeadDeliveries",
        Scope.MANAGE,
        "Make every dead delivery to one webhook endpoint due now",
        {"202": answer("How many are due again.", ref("RetriedDeadDeliveries"))},
        description="Each gets its attempts afresh, in one step; the endpoint's pending "
        "and delivered deliveries are left as they are. None dead: `retried` is 0.",
        errors=BY_ID,
    ),
}

_NOTIFICATIONS = {
    "parameters": [_FORM_ID],
    "get": operation(
        "listNotificationRecipients",
        Scope.READ,
        "A form's mail recipients",
        {"200": answer("A page of them, newest first.", page("NotificationRecipient"))},
        parameters=PAGING,
        errors=(*BY_ID, *WITH_QUERY),
    ),
    "post": operation(
        "addNotificationRecipient",
        Scope.MANAGE,
        "Mail a form's submissions to an address",
        {"201": answer("The recipient.", ref("NotificationRecipient"))},
        body=RECIPIENT_CREATE,
        errors=BY_ID,
    ),
}

_NOTIFICATION = {
    "parameters": [_RECIPIENT_ID],
    "delete": operation(
        "removeNotificationRecipient",
        Scope.MANAGE,
        "Stop mailing a recipient",
        {"204": {"description": "Removed.", "headers": HEADERS}},
        errors=BY_ID,
    ),
}

_NOTIFICATION_TEST = {
    "parameters": [_RECIPIENT_ID],
    "post": operation(
        "testNotificationRecipient",
        Scope.MANAGE,
        "Send a test mail to one recipient",
        {"202": _DELIVERY_ANSWER},
        description="Queues a `mail.test` for the relay, to this recipient only, whatever "
        "events it is mailed about: a short mail saying it is a test from the form, with "
        "no submission data. Without INTAKE_SMTP_URL the relay parks it as dead. An address "
        "that has not confirmed (`status` `pending` or `declined`) gets no test: `422` naming "
        "`recipient_id`.",
        errors=(*BY_ID, *WITH_QUERY),
        throttled=True,
    ),
}

_USAGE = {
    "get": operation(
        "getUsage",
        Scope.READ,
        "This month's usage, per form",
        {"200": answer("The workspace's usage this month.", ref("Usage"))},
        description="`used` counts this month's accepted submissions against `limit`, "
        "the plan's or the workspace's own; `ceiling` is where submissions are refused.",
    ),
}

_ERASURES = {
    "post": operation(
        "createErasure",
        Scope.MANAGE,
        "Erase a person's submissions",
        {"200": answer("The receipt.", ref("ErasureReceipt"))},
        description="Erases every submission of the workspace whose reply-to or any field "
        "value is the address (whatever its case), as deleteSubmission erases one: data, "
        "files, idempotency records and undelivered deliveries go, and webhook endpoints get "
        "`submission.deleted` for each. The receipt names what went, never what it held; "
        "`dry_run` lists what would go and erases nothing. A suspended workspace may "
        "erase too: a privacy duty does not wait.",
        body=ERASURE_REQUEST,
        acts=False,
    ),
}

MANAGEMENT_PATHS: dict[str, dict[str, Any]] = {
    "/v1/forms": _FORMS,
    "/v1/forms/{form_id}": _FORM,
    "/v1/forms/{form_id}/rotate-key": _ROTATE_KEY,
    "/v1/forms/{form_id}/duplicate": FORM_DUPLICATE,
    "/v1/forms/{form_id}/templates/preview": PREVIEW_PATH,
    # The submission endpoint's POST shares this path (openapi.py).
    "/v1/forms/{form_id}/submissions": {"get": _LIST_SUBMISSIONS},
    "/v1/forms/{form_id}/export": _EXPORT,
    "/v1/submissions/{submission_id}": _SUBMISSION,
    "/v1/forms/{form_id}/webhooks": _WEBHOOKS,
    "/v1/webhooks/{endpoint_id}": _WEBHOOK,
    "/v1/webhooks/{endpoint_id}/test": _WEBHOOK_TEST,
    "/v1/webhooks/{endpoint_id}/deliveries": _DELIVERIES,
    "/v1/webhooks/{endpoint_id}/retry-dead": _RETRY_DEAD,
    "/v1/deliveries/{delivery_id}/retry": _RETRY,
    "/v1/forms/{form_id}/notifications": _NOTIFICATIONS,
    "/v1/notifications/{recipient_id}": _NOTIFICATION,
    "/v1/notifications/{recipient_id}/test": _NOTIFICATION_TEST,
    **CHAT_PATHS,
    "/v1/usage": _USAGE,
    **SPAM_PATHS,
    "/v1/erasures": _ERASURES,
}


def with_management(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with the management API's operations and object schemas added; a path
    it already has (the submission endpoint's) gains the management methods."""
    paths = dict(document["paths"])
    for path, item in MANAGEMENT_PATHS.items():
        paths[path] = {**paths.get(path, {}), **item}
    components = dict(document["components"])
    components["schemas"] = {
        **components["schemas"],
        **OBJECT_SCHEMAS,
        **CHAT_SCHEMAS,
        **SPAM_SCHEMAS,
    }
    return {**document, "paths": paths, "components": components}
