"""`intake purge`: housekeeping, run on a schedule. Deletes the idempotency records past
their 24 hours and the outbox rows published longer ago than the retention; never an
unpublished row. Erases the spam and unverified submissions older than their retention,
and the submissions older than their form's retention, with their files; never one whose
event is still on its way. Cuts the full client addresses kept longer than
INTAKE_CLIENT_IP_FULL_HOURS to their networks. With a blob store, it also
sweeps the uploaded files no submission links, and the leftovers of interrupted
uploads, once older than the grace period. The deleting is the service's
(service/purge.py): this module reads the flags and tells what was deleted."""

from __future__ import annotations

import argparse
from datetime import timedelta

from intake.admin_runtime import AdminRuntime as Runtime
from intake.config.privacy_variables import OUTBOX_RETENTION_DAYS, SPAM_RETENTION_DAYS
from intake.config.variables import UPLOAD_GRACE
from intake.entrypoints.cli.output import Output
from intake.entrypoints.cli.parser import Subparsers, add_command, non_negative_int
from intake.entrypoints.cli.runner import CommandError, with_runtime
from intake.service.admin.form_lifecycle import FormDeletions
from intake.service.purge import Purged, Retention
from intake.service.retention import ErasedCounts
from intake.service.sweep import SweepCounts


def register(commands: Subparsers) -> None:
    purge = add_command(
        commands,
        "purge",
        help="delete expired idempotency keys, old published outbox rows, old spam and "
        "unverified submissions, submissions past their form's retention and uploaded files "
        "no submission links, and cut old full client addresses to their networks; safe to "
        "run on a schedule",
        handler=with_runtime(_purge),
    )
    purge.add_argument(
        "--outbox-retention-days",
        type=non_negative_int,
        metavar="N",
        help="keep published outbox rows N days "
        f"(default: {OUTBOX_RETENTION_DAYS.name}, {OUTBOX_RETENTION_DAYS.default_text()})",
    )
    purge.add_argument(
        "--spam-retention-days",
        type=non_negative_int,
        metavar="N",
        help="erase spam and unverified submissions after N days, 0 to keep them "
        f"(default: {SPAM_RETENTION_DAYS.name}, {SPAM_RETENTION_DAYS.default_text()})",
    )
    purge.add_argument(
        "--upload-grace",
        type=non_negative_int,
        metavar="SECONDS",
        help="leave unlinked uploads younger than this alone: they may belong to a request "
        f"still under way (default: {UPLOAD_GRACE.name}, {UPLOAD_GRACE.default_text()})",
    )


async def _purge(runtime: Runtime, args: argparse.Namespace, out: Output) -> None:
    # The grace is checked before anything is deleted.
    retention = Retention(
        outbox=timedelta(
            days=_days(args.outbox_retention_days, runtime.settings.outbox_retention_days)
        ),
        flagged=timedelta(
            days=_days(args.spam_retention_days, runtime.settings.spam_retention_days)
        ),
        upload_grace=timedelta(seconds=_grace(runtime, args)),
        client_ip_full=timedelta(hours=runtime.settings.client_ip_full_hours),
    )
    # Untouched submissions teach the spam filter before the spam retention erases them.
    settled = await runtime.services.spam.settle_untouched(
        timedelta(days=runtime.settings.spam_settle_days)
    )
    # Deletions left unfinished first: their submissions' files are then gone before the
    # upload sweep looks.
    deletions = await runtime.services.forms.finish_deletions()
    purged = await runtime.purge.run(retention)
    document: dict[str, object] = {
        "idempotency": purged.idempotency,
        "outbox": purged.outbox,
        "flagged_submissions": purged.flagged.submissions,
        "flagged_files": purged.flagged.files,
        "expired_submissions": purged.expired.submissions,
        "expired_files": purged.expired.files,
        "truncated_client_ips": purged.client_ips,
        "autoresponse_records": purged.autoresponses,
        "invitations": purged.invitations,
        "spam_settled": settled,
    }
    lines = _records_lines(purged, retention.outbox.days)
    lines.append(_flagged_line(purged.flagged, retention.flagged.days))
    lines.append(_expired_line(purged.expired))
    lines.append(_client_ips_line(purged.client_ips, retention.client_ip_full))
    lines.append(
        f"deleted {purged.invitations} dashboard "
        + ("invitation" if purged.invitations == 1 else "invitations")
        + " expired more than 30 days ago"
    )
    lines.append(
        f"taught the spam filter {settled} untouched "
        + ("submission" if settled == 1 else "submissions")
    )
    if purged.forwarded:
        # Told only when it happened: the relay erases these as it delivers them.
        document["forwarded_submissions"] = purged.forwarded
        lines.append(
            f"erased the data and files of {purged.forwarded} forwarded "
            + ("submission" if purged.forwarded == 1 else "submissions")
            + " of forward-only forms"
        )
    if deletions.erased or deletions.removed or deletions.waiting:
        # Told only when there was one: a form's deletion is most often finished at once.
        document["deleted_forms"] = {
            "submissions": deletions.erased,
            "removed": deletions.removed,
            "waiting": deletions.waiting,
        }
        lines.append(_deletions_line(deletions))
    if purged.swept is not None:
        swept = purged.swept
        document.update(orphan_files=swept.orphans, incomplete_uploads=swept.incomplete)
        lines += _swept_lines(swept, retention.upload_grace)
    out.result(document, lines)


def _deletions_line(deletions: FormDeletions) -> str:
    return (
        f"deleted forms: erased {deletions.erased} "
        + ("submission" if deletions.erased == 1 else "submissions")
        + f", removed {deletions.removed} "
        + ("form" if deletions.removed == 1 else "forms")
        + f"; {deletions.waiting} still delivering their submission.deleted events"
    )


def _days(given: int | None, configured: int) -> int:
    return configured if given is None else given


def _records_lines(counts: Purged, days: int) -> list[str]:
    return [
        f"deleted {counts.idempotency} expired idempotency "
        + ("key" if counts.idempotency == 1 else "keys"),
        f"deleted {counts.outbox} outbox "
        + ("row" if counts.outbox == 1 else "rows")
        + f" published more than {days} "
        + ("day" if days == 1 else "days")
        + " ago",
        f"deleted {counts.autoresponses} autoresponder "
        + ("record" if counts.autoresponses == 1 else "records")
        + " older than two hours",
    ]


def _flagged_line(erased: ErasedCounts, days: int) -> str:
    if days == 0:
        return "kept every spam and unverified submission (spam retention 0: forever)"
    return (
        f"erased {erased.submissions} spam or unverified "
        + ("submission" if erased.submissions == 1 else "submissions")
        + f" older than {days} "
        + ("day" if days == 1 else "days")
        + f", and {erased.files} "
        + ("file" if erased.files == 1 else "files")
    )


def _expired_line(erased: ErasedCounts) -> str:
    return (
        f"erased {erased.submissions} "
        + ("submission" if erased.submissions == 1 else "submissions")
        + f" past their form's retention, and {erased.files} "
        + ("file" if erased.files == 1 else "files")
    )


def _client_ips_line(truncated: int, kept_full: timedelta) -> str:
    return (
        f"cut {truncated} full client "
        + ("address" if truncated == 1 else "addresses")
        + f" older than {_duration(kept_full)} to "
        + ("its network" if truncated == 1 else "their networks")
    )


def _swept_lines(swept: SweepCounts, grace: timedelta) -> list[str]:
    return [
        f"deleted {swept.orphans} orphaned uploaded "
        + ("file" if swept.orphans == 1 else "files")
        + f" older than {_duration(grace)}",
        f"deleted {swept.incomplete} incomplete "
        + ("upload" if swept.incomplete == 1 else "uploads")
        + f" older than {_duration(grace)}",
    ]


def _grace(runtime: Runtime, args: argparse.Namespace) -> float:
    if args.upload_grace is None:
        return runtime.settings.upload_grace
    timeout = runtime.settings.upload_timeout
    # As for INTAKE_UPLOAD_GRACE: a file is stored before its request commits, so a
    # shorter grace could take a file of an upload still under way for an orphan.
    if args.upload_grace <= timeout:
        raise CommandError(
            f"--upload-grace ({args.upload_grace} s) must be longer than "
            f"INTAKE_UPLOAD_TIMEOUT ({timeout:g} s)"
        )
    return float(args.upload_grace)


def _duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}" + ("" if count == 1 else "s")
    return f"{seconds} second" + ("" if seconds == 1 else "s")
