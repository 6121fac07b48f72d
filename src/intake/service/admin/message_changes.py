"""Changes to what a form mails and keeps (domain/form_messages.py), as the CLI, the API
and the dashboard ask for them, checked here once: a template is compiled and rendered
with a sample submission (refuse_broken_templates, run off the event loop by forms.py) before
it is saved, so that one that would fail, reach outside the sandbox or pass a limit is
refused now, naming it, rather than at delivery."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from attrs import evolve, field, frozen

from intake.domain.form_messages import (
    MAX_AUTORESPONSE_HOURLY_LIMIT,
    TEMPLATE_NAMES,
    FormMessages,
    Templates,
)
from intake.domain.mail_templates import MAX_TEMPLATE_CHARS, MailTemplateError
from intake.service.admin.changes import UNSET, Unset
from intake.service.admin.errors import AdminError

if TYPE_CHECKING:
    from intake.domain.mail_templates import RenderTemplate
    from intake.domain.notifications import MailParts

# The names of the settings, as the API's fields and AdminError.field spell them.
MAIL_NOTIFICATIONS = "mail_notifications"
FORWARD_ONLY = "forward_only"
AUTORESPONSE = "autoresponse"
AUTORESPONSE_HOURLY_LIMIT = "autoresponse_hourly_limit"
TEMPLATES = "templates"
MESSAGE_FIELDS = frozenset(
    {MAIL_NOTIFICATIONS, FORWARD_ONLY, AUTORESPONSE, AUTORESPONSE_HOURLY_LIMIT, TEMPLATES}
)
PREVIEW_KINDS = ("notification", "autoresponse")


def template_field(name: str) -> str:
    """How an error names a template: `templates.notification_subject`."""
    return f"{TEMPLATES}.{name}"


def _templates(value: Mapping[str, str | None]) -> dict[str, str | None]:
    return dict(value)


@frozen
class MessageChanges:
    """A field None (or UNSET, for the limit, where None is the default) leaves the
    setting as it is. `templates` holds only the templates given: a text, or None (or
    an empty text) for the default."""

    mail_notifications: bool | None = None
    forward_only: bool | None = None
    autoresponse: bool | None = None
    autoresponse_hourly_limit: int | Unset | None = UNSET
    templates: Mapping[str, str | None] = field(factory=dict, converter=_templates)

    def apply(self, messages: FormMessages, form_name: str) -> FormMessages:
        if self.mail_notifications is not None:
            messages = evolve(messages, mail_notifications=self.mail_notifications)
        if self.forward_only is not None:
            messages = evolve(messages, forward_only=self.forward_only)
        if self.autoresponse is not None:
            messages = evolve(messages, autoresponse=self.autoresponse)
        if not isinstance(self.autoresponse_hourly_limit, Unset):
            limit = check_hourly_limit(self.autoresponse_hourly_limit)
            messages = evolve(messages, autoresponse_hourly_limit=limit)
        if self.templates:
            messages = evolve(
                messages, templates=changed_templates(messages.templates, self.templates)
            )
        return messages


def check_hourly_limit(limit: int | None) -> int | None:
    if limit is not None and not 1 <= limit <= MAX_AUTORESPONSE_HOURLY_LIMIT:
        raise AdminError(
            f"an hourly limit is 1 to {MAX_AUTORESPONSE_HOURLY_LIMIT}, not {limit}",
            field=AUTORESPONSE_HOURLY_LIMIT,
        )
    return limit


def changed_templates(current: Templates, given: Mapping[str, str | None]) -> Templates:
    """`current` with the templates given; AdminError for a name that is no template, or
    a template too long. Whether each renders is refuse_broken_templates's to say."""
    for name, source in given.items():
        if name not in TEMPLATE_NAMES:
            known = ", ".join(TEMPLATE_NAMES)
            raise AdminError(f"no template {name!r} (known: {known})", field=TEMPLATES)
        if source is not None and len(source) > MAX_TEMPLATE_CHARS:
            raise AdminError(
                f"{name}: a template is at most {MAX_TEMPLATE_CHARS} characters",
                field=template_field(name),
            )
    return evolve(current, **{key: value or None for key, value in given.items()})


def refuse_broken_templates(
    templates: Templates, given: Iterable[str], form_name: str, render: RenderTemplate
) -> None:
    """AdminError naming the first of the templates `given` that does not render with a
    sample submission. It renders: forms.py calls it off the event loop."""
    from intake.domain.owner_mail import check_templates  # noqa: PLC0415

    asked = set(given)
    refused = check_templates(templates, form_name, render)
    for name in TEMPLATE_NAMES:
        if name in asked and name in refused:
            raise AdminError(f"{name}: {refused[name]}", field=template_field(name))


def template_refusals(given: object, render: RenderTemplate) -> dict[str, str]:
    """Each template of `given` (a request's templates object, as sent) that does not
    render with a sample submission, by its field (`templates.<name>`), with why; what
    else is wrong with `given` is for changed_templates to say. It renders: forms.py
    calls it off the event loop."""
    if not isinstance(given, Mapping):
        return {}
    sources = {
        name: source
        for name, source in given.items()
        if name in TEMPLATE_NAMES and isinstance(source, str) and source
    }
    if not sources or any(len(source) > MAX_TEMPLATE_CHARS for source in sources.values()):
        return {}
    from intake.domain.owner_mail import check_templates  # noqa: PLC0415

    refused = check_templates(Templates(**sources), "", render)
    return {template_field(name): f"{name}: {why}" for name, why in refused.items()}


def check_preview_kind(kind: str) -> None:
    if kind not in PREVIEW_KINDS:
        raise AdminError(
            f"a preview is of {' or '.join(PREVIEW_KINDS)}, not {kind!r}", field="kind"
        )


def preview_mail(
    templates: Templates, form_name: str, kind: str, render: RenderTemplate
) -> MailParts:
    """The mail `kind` makes of a sample submission with `templates`; AdminError naming
    the template that fails. It renders: forms.py calls it off the event loop."""
    check_preview_kind(kind)
    from intake.domain.owner_mail import preview  # noqa: PLC0415

    try:
        return preview(templates, form_name, kind, render)
    except MailTemplateError as error:
        name, _, why = str(error).partition(": ")
        field_name = template_field(name) if name in TEMPLATE_NAMES else TEMPLATES
        raise AdminError(str(error) if not why else f"{name}: {why}", field=field_name) from None
