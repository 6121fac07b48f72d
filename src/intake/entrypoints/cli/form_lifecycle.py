"""`intake form duplicate` and `intake form delete` (docs/cli.md, "Forms"): a form's
settings copied into a new form, and a form deleted with its submissions, behind its
name typed at the terminal (or `--yes`)."""

from __future__ import annotations

import argparse
import sys

from intake.admin_runtime import AdminRuntime
from intake.entrypoints.cli.output import Output, key_values
from intake.entrypoints.cli.parser import Subparsers, add_command
from intake.entrypoints.cli.runner import CommandError, with_runtime
from intake.presentation.views import form_deletion_view, form_view


def register(group: Subparsers) -> None:
    duplicate = add_command(
        group,
        "duplicate",
        help="a new form with a form's settings (never its submissions or destinations)",
        handler=with_runtime(_duplicate),
    )
    duplicate.add_argument("form_id", metavar="ID")
    duplicate.add_argument("--name", help="the new form's name (default: the original's, (copy))")

    delete = add_command(
        group,
        "delete",
        help="delete a form, erasing its submissions and their files",
        handler=with_runtime(_delete),
    )
    delete.add_argument("form_id", metavar="ID")
    delete.add_argument(
        "--yes",
        action="store_true",
        help="delete without asking for the form's name (needed without a terminal)",
    )


async def _duplicate(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    copy = await runtime.services.forms.duplicate(args.form_id, args.name)
    view = form_view(copy)
    out.result(
        view,
        [f"form {copy.form_id} made with the settings of {args.form_id}", *key_values(view)],
    )


async def _delete(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    form = await runtime.services.forms.get(args.form_id)
    if not args.yes:
        _confirm(form.name, out)
    done = await runtime.services.forms.delete(form.form_id)
    waiting = (
        "; its destinations stay until its submission.deleted events are delivered "
        "(`intake relay`, then `intake purge`)"
        if done.waiting
        else ""
    )
    out.result(
        form_deletion_view(form.form_id, done.erased, bool(done.waiting)),
        [
            f"form {form.form_id} deleted; {done.erased} "
            + ("submission" if done.erased == 1 else "submissions")
            + " erased"
            + waiting
        ],
    )


def _confirm(name: str, out: Output) -> None:
    """The form's name, typed at a terminal; refused without one (a script says --yes)."""
    if not sys.stdin.isatty():
        raise CommandError("deleting a form asks for its name at a terminal; pass --yes")
    out.note(f"This erases every submission of the form {name!r} and its files.")
    out.stderr.write("Type the form's name to delete it: ")
    out.stderr.flush()
    if sys.stdin.readline().strip() != name.strip():
        raise CommandError("the name typed is not the form's: nothing was deleted")
