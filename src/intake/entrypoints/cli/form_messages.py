"""What `intake form create` and `update` take about what a form mails and keeps, and
`intake form preview-mail`: the notification or confirmation a form's templates make of
a sample submission. The rules are service/admin/message_changes.py's."""

from __future__ import annotations

import argparse
import sys

from intake.admin_runtime import AdminRuntime
from intake.domain.form_messages import MAX_AUTORESPONSE_HOURLY_LIMIT, TEMPLATE_NAMES
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Parser, whole_number
from intake.service.admin import UNSET, AdminError, Unset
from intake.service.admin.message_changes import PREVIEW_KINDS, MessageChanges

_SWITCH = ("on", "off")
_NAMES = ", ".join(TEMPLATE_NAMES)


def message_arguments(parser: Parser, *, updating: bool = False) -> None:
    parser.add_argument(
        "--mail-notifications",
        choices=_SWITCH,
        help="mail the form's notification recipients (on by default)",
    )
    parser.add_argument(
        "--forward-only",
        choices=_SWITCH,
        help="erase a submission's data and files once every destination has it (off by "
        "default; the row, its status and time stay)",
    )
    parser.add_argument(
        "--autoresponse",
        choices=_SWITCH,
        help="mail a confirmation to the submitter's reply-to address (off by default; at "
        "most one per address per hour)",
    )
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument(
        "--autoresponse-limit",
        type=whole_number,
        metavar="N",
        help=f"confirmations the form sends in any hour at most (1 to "
        f"{MAX_AUTORESPONSE_HOURLY_LIMIT}; default INTAKE_AUTORESPONSE_HOURLY_LIMIT)",
    )
    parser.add_argument(
        "--template",
        action="append",
        metavar="NAME=FILE",
        help=f"a mail template from a file (- reads standard input), one of: {_NAMES} "
        "(repeatable; Jinja2, checked before it is saved)",
    )
    if updating:
        limit.add_argument(
            "--default-autoresponse-limit",
            action="store_true",
            help="use INTAKE_AUTORESPONSE_HOURLY_LIMIT again",
        )
        parser.add_argument(
            "--default-template",
            action="append",
            metavar="NAME",
            help="use the default of this template again (repeatable)",
        )


def _switch(value: str | None) -> bool | None:
    return None if value is None else value == "on"


def read_templates(values: list[str] | None) -> dict[str, str | None]:
    """`NAME=FILE` options as the templates they give."""
    templates: dict[str, str | None] = {}
    for value in values or ():
        name, sep, path = value.partition("=")
        if not sep or not path:
            raise AdminError(f"--template is NAME=FILE, not {value!r}")
        try:
            if path == "-":
                text = sys.stdin.read()
            else:
                with open(path, encoding="utf-8") as file:
                    text = file.read()
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
            raise AdminError(f"--template {name}: cannot read {path} ({reason})") from None
        templates[name] = text
    return templates


def message_changes(args: argparse.Namespace) -> MessageChanges | None:
    """The changes asked for; None when none was."""
    templates = read_templates(args.template)
    for name in getattr(args, "default_template", None) or ():
        templates[name] = None
    limit: int | Unset | None = UNSET
    if getattr(args, "default_autoresponse_limit", False):
        limit = None
    elif args.autoresponse_limit is not None:
        limit = int(args.autoresponse_limit)
    changes = MessageChanges(
        mail_notifications=_switch(args.mail_notifications),
        forward_only=_switch(args.forward_only),
        autoresponse=_switch(args.autoresponse),
        autoresponse_hourly_limit=limit,
        templates=templates,
    )
    return None if changes == MessageChanges() else changes


def preview_arguments(parser: Parser) -> None:
    parser.add_argument("form_id", metavar="ID")
    parser.add_argument(
        "--kind",
        choices=PREVIEW_KINDS,
        default=PREVIEW_KINDS[0],
        help="the notification to recipients, or the confirmation to the submitter",
    )
    parser.add_argument(
        "--template",
        action="append",
        metavar="NAME=FILE",
        help="try this template in place of the form's own (repeatable; not saved)",
    )


async def preview(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    parts = await runtime.services.forms.preview_mail(
        args.form_id, args.kind, read_templates(args.template)
    )
    document = {"subject": parts.subject, "text": parts.text, "html": parts.html}
    out.result(
        document,
        [
            f"Subject: {parts.subject}",
            "",
            "--- text ---",
            parts.text.rstrip("\n"),
            "--- html ---",
            parts.html.rstrip("\n"),
        ],
    )
