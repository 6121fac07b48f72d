"""`intake form ...`: create, show, update, pause, resume, rotate-key and list forms;
duplicate and delete are form_lifecycle.py's."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

from intake.admin_runtime import AdminRuntime
from intake.domain.model import Challenge, ChallengeProvider, Form, FormMode
from intake.domain.privacy import MAX_RETENTION_DAYS, MIN_RETENTION_DAYS
from intake.entrypoints.cli import form_lifecycle
from intake.entrypoints.cli.form_messages import (
    message_arguments,
    message_changes,
    preview,
    preview_arguments,
)
from intake.entrypoints.cli.output import Output, key_values, table, text
from intake.entrypoints.cli.parser import (
    Parser,
    Subparsers,
    add_command,
    add_group,
    byte_size,
    number,
    whole_number,
)
from intake.entrypoints.cli.runner import read_only, with_runtime
from intake.presentation.views import form_view
from intake.service.admin import (
    DEFAULT_FORM_NAME,
    UNSET,
    AdminError,
    FormChanges,
    Unset,
    UploadChanges,
    challenge_of,
    parse_rule,
)

_MODES = [mode.value for mode in FormMode]
_PROVIDERS = [provider.value for provider in ChallengeProvider]


def register(commands: Subparsers) -> None:
    group = add_group(commands, "form", help="manage forms")

    create = add_command(group, "create", help="create a form", handler=with_runtime(_create))
    create.add_argument("--workspace", required=True, metavar="ID")
    create.add_argument("--name", help=f"the form's name (default: {DEFAULT_FORM_NAME!r})")
    create.add_argument("--mode", choices=_MODES, default=FormMode.PUBLIC.value)
    create.add_argument("--redirect-url", metavar="URL", help="where browsers go after success")
    _settings_arguments(create)
    message_arguments(create)

    update = add_command(
        group,
        "update",
        help="change a form's settings; a list given replaces the form's whole list",
        handler=with_runtime(_update),
    )
    update.add_argument("form_id", metavar="ID")
    update.add_argument("--name")
    update.add_argument("--mode", choices=_MODES)
    redirect = update.add_mutually_exclusive_group()
    redirect.add_argument("--redirect-url", metavar="URL", help="where browsers go after success")
    redirect.add_argument("--clear-redirect-url", action="store_true")
    _settings_arguments(update, replacing=True)
    message_arguments(update, updating=True)

    for name, about, handler in (
        ("show", "show a form", read_only(_show)),
        ("pause", "pause a form: it refuses submissions", with_runtime(_pause)),
        ("resume", "resume a paused form", with_runtime(_resume)),
        (
            "rotate-key",
            "give a form a new public key; the old one stops working",
            with_runtime(_rotate),
        ),
    ):
        command = add_command(group, name, help=about, handler=handler)
        command.add_argument("form_id", metavar="ID")

    preview_mail = add_command(
        group,
        "preview-mail",
        help="show the mail a form's templates make of a sample submission",
        handler=read_only(preview),
    )
    preview_arguments(preview_mail)

    listing = add_command(group, "list", help="list forms", handler=read_only(_list))
    listing.add_argument("--workspace", metavar="ID", help="only this workspace's forms")
    form_lifecycle.register(group)


def _settings_arguments(parser: Parser, *, replacing: bool = False) -> None:
    """The options `create` and `update` share. On `update` a list option replaces the
    form's whole list (nothing is added to it), and each list can be cleared."""
    whole = "; replaces the form's whole list of {}" if replacing else ""
    origins = parser.add_mutually_exclusive_group()
    origins.add_argument(
        "--allowed-origin",
        action="append",
        metavar="URL",
        help="accept submissions only from this origin (repeatable"
        + whole.format("allowed origins")
        + ")",
    )
    rules = parser.add_mutually_exclusive_group()
    rules.add_argument(
        "--rule",
        action="append",
        metavar="FIELD:KIND",
        help="a validation rule: required, email, url, number or max_length=N (repeatable"
        + whole.format("rules")
        + "; not on control fields such as _replyto)",
    )
    challenge = parser.add_mutually_exclusive_group()
    challenge.add_argument("--challenge", choices=_PROVIDERS, help="require a bot challenge")
    secret = parser.add_mutually_exclusive_group()
    secret.add_argument(
        "--challenge-secret",
        metavar="S",
        help="the provider's secret key (visible to other users in the process list: "
        "prefer --challenge-secret-file)",
    )
    secret.add_argument(
        "--challenge-secret-file",
        metavar="PATH",
        help="a file whose first line is the provider's secret key (- reads standard input)",
    )
    parser.add_argument(
        "--spam-threshold", type=number, metavar="X", help="content score that marks spam"
    )
    if replacing:
        origins.add_argument("--clear-allowed-origins", action="store_true")
        rules.add_argument("--clear-rules", action="store_true")
        challenge.add_argument("--no-challenge", action="store_true")
    _upload_arguments(parser)
    retention = parser.add_mutually_exclusive_group()
    retention.add_argument(
        "--retention-days",
        type=whole_number,
        metavar="N",
        help=f"erase its submissions and their files N days after they came in "
        f"({MIN_RETENTION_DAYS} to {MAX_RETENTION_DAYS}; `intake purge` and `intake relay` do)",
    )
    retention.add_argument(
        "--no-retention", action="store_true", help="keep its submissions until erased (default)"
    )


# The upload options as they are spelled, and the policy value each one sets.
_UPLOAD_VALUES = {
    "--upload-type": "upload_type",
    "--max-file-size": "max_file_size",
    "--max-upload-total": "max_upload_total",
    "--max-files": "max_files",
}


def _upload_arguments(parser: Parser) -> None:
    switch = parser.add_mutually_exclusive_group()
    switch.add_argument(
        "--uploads",
        dest="uploads",
        action="store_const",
        const=True,
        default=None,
        help="accept file uploads (the defaults for any limit not given)",
    )
    switch.add_argument(
        "--no-uploads", dest="uploads", action="store_const", const=False, help="refuse files"
    )
    parser.add_argument(
        "--upload-type",
        action="append",
        metavar="TYPE",
        help="a file type accepted, as the content shows it: type/subtype, type/* or */* "
        "(repeatable; replaces the list; turns uploads on)",
    )
    parser.add_argument(
        "--max-file-size",
        type=byte_size,
        metavar="BYTES",
        help="the largest file accepted, e.g. 10MiB (turns uploads on)",
    )
    parser.add_argument(
        "--max-upload-total",
        type=byte_size,
        metavar="BYTES",
        help="the most bytes of files one submission may carry (turns uploads on)",
    )
    parser.add_argument(
        "--max-files",
        type=whole_number,
        metavar="N",
        help="the most files one submission may carry (turns uploads on)",
    )


def _upload_changes(args: argparse.Namespace) -> UploadChanges:
    given = [flag for flag, name in _UPLOAD_VALUES.items() if getattr(args, name) is not None]
    if args.uploads is False and given:
        raise AdminError(f"--no-uploads cannot go with {', '.join(given)}")
    return UploadChanges(
        enabled=args.uploads,
        allowed_types=tuple(args.upload_type) if args.upload_type is not None else None,
        max_file_size=args.max_file_size,
        max_total_size=args.max_upload_total,
        max_files=args.max_files,
    )


def _note_sizes(out: Output, form: Form) -> None:
    policy = form.uploads
    if policy is not None and policy.max_file_size > policy.max_total_size:
        out.note(
            f"note: files are limited to {policy.max_total_size} bytes all together, "
            f"so no single file can reach max_file_size ({policy.max_file_size} bytes)"
        )


async def _create(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    form = await runtime.services.forms.create(
        args.workspace,
        name=DEFAULT_FORM_NAME if args.name is None else args.name,
        mode=FormMode(args.mode),
        allowed_origins=args.allowed_origin or (),
        rules=[parse_rule(rule) for rule in args.rule or ()],
        challenge=challenge_of(args.challenge, _challenge_secret(args)),
        redirect_url=args.redirect_url,
        spam_threshold=args.spam_threshold,
        uploads=_upload_changes(args),
        retention_days=args.retention_days,
        messages=message_changes(args),
    )
    _note_sizes(out, form)
    _print_form(out, form, f"form {form.form_id} created")


async def _update(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    form = await runtime.services.forms.update(args.form_id, _form_changes(args))
    _note_sizes(out, form)
    _print_form(out, form, f"form {form.form_id} updated")


def _form_changes(args: argparse.Namespace) -> FormChanges:
    """Only what was asked for: an omitted option leaves the setting as it is."""
    uploads = _upload_changes(args)  # values not given keep what the form has
    origins: list[str] | None = [] if args.clear_allowed_origins else args.allowed_origin
    rules = None
    if args.clear_rules:
        rules = []
    elif args.rule:
        rules = [parse_rule(rule) for rule in args.rule]
    redirect_url: str | Unset | None = UNSET
    if args.clear_redirect_url:
        redirect_url = None
    elif args.redirect_url is not None:
        redirect_url = args.redirect_url
    return FormChanges(
        name=args.name,
        mode=FormMode(args.mode) if args.mode else None,
        allowed_origins=origins,
        rules=rules,
        challenge=_challenge_change(args),
        redirect_url=redirect_url,
        spam_threshold=args.spam_threshold,
        uploads=uploads,
        retention_days=_retention_change(args),
        messages=message_changes(args),
    )


def _retention_change(args: argparse.Namespace) -> int | Unset | None:
    if args.no_retention:
        return None
    return UNSET if args.retention_days is None else int(args.retention_days)


def _challenge_change(args: argparse.Namespace) -> Challenge | Unset | None:
    secret = _challenge_secret(args)
    if args.no_challenge:
        if secret is not None:
            raise AdminError("--challenge-secret goes with --challenge, not --no-challenge")
        return None
    if args.challenge is not None or secret is not None:
        return challenge_of(args.challenge, secret)
    return UNSET


STANDARD_INPUT = "-"


def _challenge_secret(args: argparse.Namespace) -> str | None:
    """--challenge-secret, or the first line of --challenge-secret-file: a file keeps the
    secret out of the process list, which any user of the host may read."""
    if args.challenge_secret_file is None:
        secret: str | None = args.challenge_secret
        return secret
    try:
        if args.challenge_secret_file == STANDARD_INPUT:
            text = sys.stdin.readline()
        else:
            with open(args.challenge_secret_file, encoding="utf-8") as file:
                text = file.readline()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
        raise AdminError(f"--challenge-secret-file: cannot read it ({reason})") from None
    secret = text.strip()
    if not secret:
        raise AdminError("--challenge-secret-file: its first line is empty")
    return secret


async def _show(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    _print_form(out, await runtime.services.forms.get(args.form_id))


async def _pause(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    form = await runtime.services.forms.update(args.form_id, FormChanges(enabled=False))
    _print_form(out, form, f"form {form.form_id} paused")


async def _resume(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    form = await runtime.services.forms.update(args.form_id, FormChanges(enabled=True))
    _print_form(out, form, f"form {form.form_id} resumed")


async def _rotate(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    form = await runtime.services.forms.rotate_key(args.form_id)
    _print_form(
        out, form, f"form {form.form_id} has a new public key; the old one no longer resolves"
    )


async def _list(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    if args.workspace is not None:
        await runtime.services.workspaces.get(args.workspace)  # an unknown id is an error, not []
    forms = await runtime.services.forms.all(args.workspace)
    rows = (
        (f.form_id, f.public_form_key, "enabled" if f.enabled else "paused", f.mode.value, f.name)
        for f in forms
    )
    lines = table(("FORM", "PUBLIC KEY", "STATE", "MODE", "NAME"), rows) if forms else []
    out.result({"forms": [form_view(f) for f in forms]}, lines or ["no forms"])


def _print_form(out: Output, form: Form, headline: str | None = None) -> None:
    view = form_view(form)
    lines = [headline] if headline else []
    templates = view["templates"]
    assert isinstance(templates, dict)
    own = [name for name, source in templates.items() if source is not None]
    out.result(
        view,
        [
            *lines,
            *key_values(view, skip=("rules", "templates")),
            f"rules={_rules(view)}",
            f"templates={text(own)}",  # the form's own; `--json` shows them whole
        ],
    )


def _rules(view: Mapping[str, object]) -> str:
    rules = view["rules"]
    assert isinstance(rules, list)
    spelled = [
        f"{rule['field']}:{rule['kind']}" + (f"={rule['limit']}" if "limit" in rule else "")
        for rule in rules
    ]
    return text(spelled)
