"""Mail in the owner's words: the notification's parts from a form's templates, and the
autoresponse (the confirmation to the person who wrote in).

Each part an owner wrote is rendered by the `render` given (the sandbox behind the
TemplateRenderer port, mail_templates.py) with the values below, already text; a part
left unset, or one that fails when sent (a template saved before a rule tightened, or
one past a limit of time or size, say), takes the default, and the caller is told which
failed so that no notification is lost to a template. The default autoresponse repeats nothing the
visitor sent: only an owner's own template can, where the owner put it, escaped."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime

from intake.domain.chat_text import plain
from intake.domain.form_messages import TEMPLATE_NAMES, Templates
from intake.domain.mail_templates import MailTemplateError, RenderTemplate, is_html, text_as_html
from intake.domain.notifications import (
    MAX_SUBJECT_CHARS,
    MailParts,
    display_value,
    message_id,
    one_line,
    payload_moment,
    payload_text,
    render_notification,
    reply_address,
)
from intake.domain.validation import DEFAULT_EMAIL_FIELD
from intake.domain.visitor_text import echoed

DEFAULT_AUTORESPONSE_SUBJECT = "We received your message"
AUTORESPONSE = "autoresponse"

# What a template is checked and previewed with: a submission as a visitor might send it.
SAMPLE_PAYLOAD: Mapping[str, object] = {
    "submission_id": "sub_sample",
    "form_id": "frm_sample",
    "created_at": "2026-01-15T09:30:00+00:00",
    "subject": "A question",
    "reply_to": "ada@example.com",
    "data": {"name": "Ada Lovelace", "email": "ada@example.com", "message": "Hello <b>there</b>"},
    "files": [],
}


def template_context(
    payload: Mapping[str, object], form_name: str, *, for_owner: bool
) -> dict[str, object]:
    """The values a template sees. The owner's notification also sees the files and the
    reply-to address; the autoresponse, going to whoever typed it, does not, and sees
    the visitor's text (`subject`, `fields`) only as `echoed` makes it."""
    data = payload.get("data")
    fields = data if isinstance(data, Mapping) else {}
    shown = plain if for_owner else echoed
    context: dict[str, object] = {
        "form_name": form_name,
        "form_id": payload_text(payload.get("form_id")),
        "submission_id": payload_text(payload.get("submission_id")),
        "received_at": _received(payload.get("created_at")),
        "subject": shown(payload_text(payload.get("subject"))),
        "fields": {shown(str(name)): shown(display_value(v)) for name, v in fields.items()},
    }
    if for_owner:
        address = reply_address(payload.get("reply_to"), fields.get(DEFAULT_EMAIL_FIELD))
        context["reply_to"] = "" if address is None else address.addr_spec
        files = payload.get("files")
        context["files"] = [
            {key: payload_text(entry.get(key)) for key in ("field", "name", "url")}
            for entry in (files if isinstance(files, list) else [])
            if isinstance(entry, Mapping)
        ]
    return context


def without_visitor_text(context: Mapping[str, object]) -> dict[str, object]:
    """`context` with the visitor's text emptied (every field there, each ""): what an
    autoresponse's subject sees, since a subject shows before the mail is opened, to a
    stranger, under the form's name."""
    fields = context.get("fields")
    names = fields if isinstance(fields, Mapping) else {}
    return {**context, "subject": "", "fields": dict.fromkeys(names, "")}


def render_parts(
    templates: Templates,
    kind: str,
    context: Mapping[str, object],
    default: MailParts,
    render: RenderTemplate,
) -> MailParts:
    """The subject, text and HTML of `kind` ("notification" or "autoresponse"): each the
    owner's template where set and working, else `default`'s. An autoresponse's subject
    is rendered without the visitor's text."""
    failed: list[str] = []

    def part(name: str) -> str | None:
        source = templates.get(f"{kind}_{name}")
        if source is None:
            return None
        seen = (
            without_visitor_text(context) if (kind, name) == (AUTORESPONSE, "subject") else context
        )
        try:
            return render(source, seen, autoescape=name == "html")
        except MailTemplateError:
            failed.append(f"{kind}_{name}")
            return None

    subject = part("subject")
    text = part("text")
    html = part("html")
    if html is None and text is not None:
        html = text_as_html(text)
    return MailParts(
        subject=one_line(subject)[:MAX_SUBJECT_CHARS] if subject else default.subject,
        text=text if text is not None else default.text,
        html=html if html is not None else default.html,
        failed=tuple(failed),
    )


def render_notification_mail(
    payload: Mapping[str, object],
    *,
    form_name: str,
    templates: Templates,
    mail_from: str,
    to: str,
    base_url: str | None,
    render: RenderTemplate,
) -> tuple[EmailMessage, tuple[str, ...]]:
    """The notification in the owner's words where the form has templates, and the
    names of those that failed (their defaults were used)."""
    failed: list[str] = []

    def own_words(subject: str, text: str, html: str) -> tuple[str, str, str]:
        context = template_context(payload, one_line(form_name), for_owner=True)
        default = MailParts(subject, text, html)
        parts = render_parts(templates, "notification", context, default, render)
        failed.extend(parts.failed)
        return parts.subject, parts.text, parts.html

    message = render_notification(
        payload,
        form_name=form_name,
        mail_from=mail_from,
        to=to,
        base_url=base_url,
        own_words=own_words,
    )
    return message, tuple(failed)


def preview(templates: Templates, form_name: str, kind: str, render: RenderTemplate) -> MailParts:
    """`kind`'s mail ("notification" or "autoresponse") for the sample submission, as
    the templates make it; MailTemplateError (its message naming the template) for one
    that fails, rather than the default a send would fall back to."""
    for name, why in check_templates(templates, form_name, render).items():
        if name.startswith(kind):
            raise MailTemplateError(f"{name}: {why}")
    if kind == "autoresponse":
        message, _ = render_autoresponse(
            SAMPLE_PAYLOAD,
            form_name=form_name,
            templates=templates,
            mail_from="forms@example.com",
            to=Address(addr_spec="ada@example.com"),
            render=render,
        )
    else:
        message, _ = render_notification_mail(
            SAMPLE_PAYLOAD,
            form_name=form_name,
            templates=templates,
            mail_from="forms@example.com",
            to="owner@example.com",
            base_url=None,
            render=render,
        )
    return _parts_of(message)


def _parts_of(message: EmailMessage) -> MailParts:
    text = message.get_body(("plain",))
    html = message.get_body(("html",))
    return MailParts(
        subject=str(message["Subject"]),
        text=text.get_content() if isinstance(text, EmailMessage) else "",
        html=html.get_content() if isinstance(html, EmailMessage) else "",
    )


def default_autoresponse(context: Mapping[str, object]) -> MailParts:
    form_name = str(context.get("form_name") or "")
    text = (
        "Hello,\n\n"
        f"thank you for writing{f' to {form_name}' if form_name else ''}. "
        f"We received your message on {context.get('received_at') or ''} and will answer soon.\n\n"
        "This is an automatic confirmation; there is no need to reply to it.\n"
    )
    return MailParts(subject=DEFAULT_AUTORESPONSE_SUBJECT, text=text, html=text_as_html(text))


def render_autoresponse(
    payload: Mapping[str, object],
    *,
    form_name: str,
    templates: Templates,
    mail_from: str,
    to: Address,
    render: RenderTemplate,
) -> tuple[EmailMessage, tuple[str, ...]]:
    """The confirmation for `to`, and the names of the owner's templates that failed."""
    context = template_context(payload, one_line(form_name), for_owner=False)
    parts = render_parts(templates, "autoresponse", context, default_autoresponse(context), render)
    submission_id = payload_text(payload.get("submission_id"))
    message = EmailMessage()
    message["Subject"] = parts.subject
    message["From"] = one_line(mail_from)
    message["To"] = to
    created = payload_moment(payload.get("created_at"))
    if created is not None:
        message["Date"] = format_datetime(created)
    message["Message-ID"] = message_id(f"{submission_id}.confirmation", to.addr_spec, mail_from)
    # RFC 3834: an automatic answer, which no responder should answer in turn.
    message["Auto-Submitted"] = "auto-replied"
    message.set_content(parts.text, charset="utf-8")
    message.add_alternative(parts.html, subtype="html", charset="utf-8")
    return message, parts.failed


def check_templates(templates: Templates, form_name: str, render: RenderTemplate) -> dict[str, str]:
    """Each set template that does not compile, reaches outside the sandbox or fails
    with a sample submission, by name, with why."""
    refused: dict[str, str] = {}
    for name in TEMPLATE_NAMES:
        source = templates.get(name)
        if source is None:
            continue
        owner = name.startswith("notification")
        context = template_context(SAMPLE_PAYLOAD, form_name, for_owner=owner)
        try:
            render(source, context, autoescape=is_html(name))
        except MailTemplateError as error:
            refused[name] = str(error)
    return refused


def _received(value: object) -> str:
    moment = payload_moment(value)
    return "" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
