"""`intake submissions release|mark-spam|delete ID`: an owner's triage of one submission,
through the same service as PATCH and DELETE /v1/submissions/{submission_id}."""

from __future__ import annotations

import argparse

from intake.admin_runtime import AdminRuntime
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command
from intake.entrypoints.cli.runner import with_runtime
from intake.presentation.views import submission_view

_COMMANDS = (
    (
        "release",
        "accept a spam or unverified submission: it counts in this month's usage and "
        "is delivered as a new submission.created event (one accepted already is left as it is; "
        "one accepted once before is not sent again)",
    ),
    ("mark-spam", "mark a submission as spam: nothing is sent, the month's usage is kept"),
    (
        "delete",
        "erase a submission: its data, files, idempotency record and undelivered "
        "deliveries; webhook endpoints are sent submission.deleted",
    ),
)


def register(group: Subparsers) -> None:
    handlers = {"release": _release, "mark-spam": _mark_spam, "delete": _delete}
    # Each command takes one submission's id, and nothing else.
    for name, help_text in _COMMANDS:
        command = add_command(group, name, help=help_text, handler=with_runtime(handlers[name]))
        command.add_argument("submission_id", metavar="ID")


async def _release(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    services = runtime.services
    released = await services.triage.released(await services.submissions.get(args.submission_id))
    after = released.submission
    said = "was accepted already"
    if released.changed:
        # Accepted once before: its submission.created went out then, never twice.
        said = "released" if released.queued else "released; sent before: nothing is queued"
    view = submission_view(after, services.submissions.files_view(after))
    out.result(view, [f"submission {after.submission_id} {said}", f"status={after.status}"])


async def _mark_spam(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    services = runtime.services
    marked = await services.triage.mark_spam(await services.submissions.get(args.submission_id))
    view = submission_view(marked, services.submissions.files_view(marked))
    out.result(view, [f"submission {marked.submission_id} marked as spam"])


async def _delete(runtime: AdminRuntime, args: argparse.Namespace, out: Output) -> None:
    services = runtime.services
    await services.triage.delete(await services.submissions.get(args.submission_id))
    out.result(
        {"submission_id": args.submission_id, "deleted": True},
        [f"submission {args.submission_id} deleted"],
    )
