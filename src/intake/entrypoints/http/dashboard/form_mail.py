"""A form's mail recipients, for its owners: the addresses told of each accepted
submission; add one, remove one (after a confirmation), and send one a test mail, whose
delivery (sent, waiting, or parked without a mail server, then retried) the page then
shows."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from intake.domain.deliveries import NotificationRecipient
from intake.domain.model import EventType, Form
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.form_owner import (
    every_item,
    for_owners,
    owner_context,
    owners_post,
    settings_path,
    shown_test,
    to_shown_test,
)
from intake.entrypoints.http.dashboard.forms import text
from intake.entrypoints.http.dashboard.told import tell
from intake.entrypoints.http.management.notifications import MAX_EMAIL
from intake.presentation.views import recipient_view
from intake.service.accounts import SignedIn
from intake.service.admin import AdminError, NotFoundError
from intake.service.admin.errors import TooSoon

PATH = web.PREFIX + "/forms/{form_id}/settings/mail"


@for_owners
async def mail_page(request: Request, signed: SignedIn, form: Form) -> Response:
    return await _page(request, signed, form, test_id=request.query_params.get("test", ""))


async def _page(
    request: Request,
    signed: SignedIn,
    form: Form,
    *,
    address: str = "",
    error: str | None = None,
    confirm: NotificationRecipient | None = None,
    test_id: str = "",
    status: int = 200,
) -> Response:
    services = web.runtime(request).services
    recipients = await every_item(
        lambda limit, cursor: services.recipients.page(
            form.workspace_id, form.form_id, limit, cursor
        )
    )
    context = owner_context(signed, form, "mail", settings_path(form, "mail")) | {
        "recipients": [recipient_view(r) for r in recipients],
        "addresses": {r.recipient_id: r.email for r in recipients},
        "address": address,
        "error": error,
        "confirm": recipient_view(confirm) if confirm else None,
        "test": await shown_test(request, form, test_id, EventType.MAIL_TEST),
        "smtp": web.runtime(request).settings.smtp_url is not None,
    }
    return web.page(request, "form_mail.html", context, status=status)


async def _recipient(request: Request, form: Form, recipient_id: str) -> NotificationRecipient:
    """One of this form's recipients; NotFoundError for any other."""
    services = web.runtime(request).services
    recipient = await services.recipients.owned(form.workspace_id, recipient_id)
    if recipient.form_id != form.form_id:
        raise NotFoundError(f"no notification recipient {recipient_id!r}")
    return recipient


@owners_post
async def add(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    address = text(posted, "email")
    try:
        if len(address) > MAX_EMAIL:  # as the API's reader refuses it
            raise AdminError(f"must be at most {MAX_EMAIL} characters", field="email")
        await web.runtime(request).services.recipients.add_owned(
            form.workspace_id, form.form_id, address, added_by=signed.user.email
        )
    except AdminError as error:
        message = f"Email: {error}."
        status = 429 if isinstance(error, TooSoon) else 422
        return await _page(request, signed, form, address=address, error=message, status=status)
    said = f"{address} added: it gets the form's mail once it confirms, as a mail asks it to."
    return await tell(request, signed, settings_path(form, "mail"), said)


@owners_post
async def remove(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    """A first post asks for confirmation; the second, with `confirm`, removes."""
    recipient = await _recipient(request, form, text(posted, "recipient"))
    if text(posted, "confirm") != "yes":
        return await _page(request, signed, form, confirm=recipient)
    await web.runtime(request).services.recipients.remove_owned(
        form.workspace_id, recipient.recipient_id
    )
    said = f"{recipient.email} removed: it gets no more of the form's mail."
    return await tell(request, signed, settings_path(form, "mail"), said)


@owners_post
async def send_test(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    """Queues a test mail to one recipient; the page it leads to shows how it went."""
    recipient = await _recipient(request, form, text(posted, "recipient"))
    try:
        record = await web.runtime(request).services.recipients.test_owned(
            form.workspace_id, recipient.recipient_id
        )
    except TooSoon as error:
        return await _page(request, signed, form, error=f"{error}.", status=429)
    except NotFoundError:
        raise  # answered as not found, not as a refusal below
    except AdminError as error:  # not confirmed: it gets no test
        return await _page(request, signed, form, error=f"{error}.", status=422)
    return to_shown_test(form, "mail", record.delivery.delivery_id)


@owners_post
async def retry_test(request: Request, signed: SignedIn, form: Form, posted: FormData) -> Response:
    """Makes a parked test mail due again, once a mail server is configured."""
    delivery_id = text(posted, "delivery")
    if await shown_test(request, form, delivery_id, EventType.MAIL_TEST) is None:
        raise NotFoundError(f"no test mail {delivery_id!r}")
    try:
        await web.runtime(request).services.deliveries.retry_owned(form.workspace_id, delivery_id)
    except NotFoundError:
        raise  # answered as not found, not as a refusal below
    except AdminError as error:  # delivered already
        message = f"{error}."
        return await _page(request, signed, form, error=message, test_id=delivery_id, status=422)
    return to_shown_test(form, "mail", delivery_id)
