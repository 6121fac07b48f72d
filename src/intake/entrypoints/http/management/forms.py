"""The workspace's forms: GET and POST /v1/forms, GET, PATCH and DELETE
/v1/forms/{form_id}, POST /v1/forms/{form_id}/rotate-key, /duplicate and
/templates/preview. The rules are `intake form`'s, in service/admin."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from intake.domain.model import Scope
from intake.entrypoints.http.management.common import (
    BodyFields,
    Call,
    endpoint,
    json_fields,
    json_response,
    no_content,
    page_cursor,
    page_limit,
    page_response,
)
from intake.entrypoints.http.management.form_fields import (
    CREATE_FIELDS,
    UPDATE_FIELDS,
    form_changes,
    new_form,
)
from intake.entrypoints.http.management.form_message_fields import templates_given
from intake.presentation.views import form_view, mail_preview_view
from intake.service.admin.inputs import NAME
from intake.service.admin.message_changes import PREVIEW_KINDS, TEMPLATES

PREVIEW_KIND = "kind"
PREVIEW_FIELDS = frozenset({PREVIEW_KIND, TEMPLATES})
DUPLICATE_FIELDS = frozenset({NAME})


@endpoint(Scope.READ)
async def list_forms(request: Request, call: Call) -> Response:
    limit = page_limit(request)
    cursor = page_cursor(request)
    page = await call.services.forms.page(call.workspace_id, limit, cursor)
    return page_response([form_view(form) for form in page.items], page.next_cursor)


async def _refuse_templates(call: Call, fields: BodyFields) -> BodyFields:
    """`fields` with each of its templates that does not render recorded against it
    (the service renders them off the event loop): one 422 names every bad field."""
    for name, why in (
        await call.services.forms.template_refusals(fields.object(TEMPLATES))
    ).items():
        fields.fail(name, why)
    return fields


@endpoint(Scope.MANAGE)
async def create_form(request: Request, call: Call) -> Response:
    asked = new_form(await _refuse_templates(call, await json_fields(request, CREATE_FIELDS)))
    form = await call.services.forms.create(
        call.workspace_id,
        name=asked.name,
        mode=asked.mode,
        allowed_origins=asked.allowed_origins,
        rules=asked.rules,
        challenge=asked.challenge,
        redirect_url=asked.redirect_url,
        spam_threshold=asked.spam_threshold,
        uploads=asked.uploads,
        retention_days=asked.retention_days,
        messages=asked.messages,
    )
    return json_response(form_view(form), status=201)


@endpoint(Scope.READ)
async def get_form(request: Request, call: Call) -> Response:
    form = await call.services.forms.owned(call.workspace_id, request.path_params["form_id"])
    return json_response(form_view(form))


@endpoint(Scope.MANAGE)
async def update_form(request: Request, call: Call) -> Response:
    form_id = request.path_params["form_id"]
    # Not found before the body is read: another workspace's id tells nothing.
    await call.services.forms.owned(call.workspace_id, form_id)
    changes = form_changes(await _refuse_templates(call, await json_fields(request, UPDATE_FIELDS)))
    form = await call.services.forms.update_owned(call.workspace_id, form_id, changes)
    return json_response(form_view(form))


@endpoint(Scope.MANAGE)
async def preview_mail(request: Request, call: Call) -> Response:
    """The mail the form's templates make of a sample submission; `templates` in the
    body (checked, not saved) try others in their place."""
    form_id = request.path_params["form_id"]
    await call.services.forms.owned(call.workspace_id, form_id)
    fields = await _refuse_templates(call, await json_fields(request, PREVIEW_FIELDS))
    kind = fields.text(PREVIEW_KIND) or PREVIEW_KINDS[0]
    if kind not in PREVIEW_KINDS:
        fields.fail(PREVIEW_KIND, f"One of {', '.join(PREVIEW_KINDS)}.")
    templates = templates_given(fields)
    fields.done()
    parts = await call.services.forms.preview_mail(form_id, kind, templates)
    return json_response(mail_preview_view(kind, parts))


@endpoint(Scope.MANAGE)
async def rotate_key(request: Request, call: Call) -> Response:
    form = await call.services.forms.rotate_owned_key(
        call.workspace_id, request.path_params["form_id"]
    )
    return json_response(form_view(form))


@endpoint(Scope.MANAGE)
async def duplicate_form(request: Request, call: Call) -> Response:
    """A new form with the settings of this one (`Forms.duplicate`);
    `name` in the body, else the original's marked as a copy."""
    form_id = request.path_params["form_id"]
    # Not found before the body is read: another workspace's id tells nothing.
    await call.services.forms.owned(call.workspace_id, form_id)
    fields = await json_fields(request, DUPLICATE_FIELDS)
    name = fields.text(NAME)
    fields.done()
    copy = await call.services.forms.duplicate_owned(call.workspace_id, form_id, name)
    return json_response(form_view(copy), status=201)


@endpoint(Scope.MANAGE)
async def delete_form(request: Request, call: Call) -> Response:
    """The form is gone at once; its submissions are erased before the answer, and its
    row and destinations go once their `submission.deleted` events are delivered."""
    await call.services.forms.delete_owned(call.workspace_id, request.path_params["form_id"])
    return no_content()


ROUTES: list[Route] = [
    Route("/v1/forms", list_forms, methods=["GET"]),
    Route("/v1/forms", create_form, methods=["POST"]),
    Route("/v1/forms/{form_id}", get_form, methods=["GET"]),
    Route("/v1/forms/{form_id}", update_form, methods=["PATCH"]),
    Route("/v1/forms/{form_id}", delete_form, methods=["DELETE"]),
    Route("/v1/forms/{form_id}/duplicate", duplicate_form, methods=["POST"]),
    Route("/v1/forms/{form_id}/rotate-key", rotate_key, methods=["POST"]),
    Route("/v1/forms/{form_id}/templates/preview", preview_mail, methods=["POST"]),
]
