"""The OpenAPI operations of a form's life past its creation: DELETE /v1/forms/{form_id}
and POST /v1/forms/{form_id}/duplicate (docs/api.md, "Deleting a form", "Duplicating a
form")."""

from __future__ import annotations

from typing import Any

from intake.domain.model import Scope
from intake.entrypoints.http.openapi_objects import FORM_DUPLICATE_REQUEST
from intake.entrypoints.http.openapi_operations import (
    BY_ID,
    HEADERS,
    answer,
    operation,
    path_id,
    ref,
)

FORM_DELETE = operation(
    "deleteForm",
    Scope.MANAGE,
    "Delete a form, its submissions and their files",
    {"204": {"description": "Deleted: the form is not found from now on.", "headers": HEADERS}},
    description="The form is not found at once (its public key answers `404 "
    "form_not_found`); each of its submissions is erased as deleteSubmission erases one, "
    "its webhook endpoints getting a `submission.deleted` for each; the form's endpoints, "
    "recipients and chat destinations go once those events are delivered. The month's "
    "usage is not given back.",
    errors=BY_ID,
)

FORM_DUPLICATE: dict[str, Any] = {
    "parameters": [path_id("form_id", "form")],
    "post": operation(
        "duplicateForm",
        Scope.MANAGE,
        "A new form with this form's settings",
        {"201": answer("The new form, with a public key of its own.", ref("Form"))},
        description="Copies the mode, allowed origins, rules, spam threshold, challenge "
        "(provider and secret), redirect, uploads, retention and messages; never the "
        "submissions or the destinations (webhook endpoints, recipients, chat). Send `{}` "
        "for the original's name marked `(copy)`.",
        body=FORM_DUPLICATE_REQUEST,
        errors=BY_ID,
    ),
}
