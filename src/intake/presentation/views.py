"""Views: the one JSON shape of each object, whichever entry point prints it."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from intake.domain.deliveries import (
    Delivery,
    DeliveryAttempt,
    NotificationRecipient,
    WebhookEndpoint,
)
from intake.domain.model import ApiKey, Form, Submission, Workspace, scopes_in_order
from intake.ports.deliveries import DeliveryRecord
from intake.ports.submissions import OutboxRow

if TYPE_CHECKING:
    from intake.domain.notifications import MailParts

    # Named in annotations only: a command imports the services it calls, and no other.
    from intake.service.admin import (
        CreatedEndpoint,
        CreatedKey,
        Outbox,
        SubmissionDetail,
        WorkspaceUsage,
    )


def _time(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def workspace_view(workspace: Workspace) -> dict[str, object]:
    return {
        "workspace_id": workspace.workspace_id,
        "name": workspace.name,
        "plan": workspace.plan.value,
        "monthly_limit": workspace.monthly_limit,
        "storage_limit": workspace.storage_limit,
        "active": workspace.active,
        "created_at": _time(workspace.created_at),
    }


def form_view(form: Form) -> dict[str, object]:
    return {
        "form_id": form.form_id,
        "workspace_id": form.workspace_id,
        "public_form_key": form.public_form_key,
        "name": form.name,
        "mode": form.mode.value,
        "enabled": form.enabled,
        "state": "enabled" if form.enabled else "paused",
        "allowed_origins": list(form.allowed_origins),
        "rules": [
            {"field": r.field, "kind": r.kind.value, **({"limit": r.limit} if r.limit else {})}
            for r in form.rules
        ],
        "spam_threshold": form.spam_threshold,
        # The provider only: the secret is never printed back.
        "challenge": form.challenge.provider.value if form.challenge else None,
        "redirect_url": form.redirect_url,
        "uploads": form.uploads.to_json() if form.uploads is not None else None,
        "retention_days": form.retention_days,  # null: kept until erased
        "mail_notifications": form.messages.mail_notifications,
        "forward_only": form.messages.forward_only,
        "autoresponse": form.messages.autoresponse,
        # null: INTAKE_AUTORESPONSE_HOURLY_LIMIT
        "autoresponse_hourly_limit": form.messages.autoresponse_hourly_limit,
        # Each null: the default.
        "templates": form.messages.templates.to_json(),
        "created_at": _time(form.created_at),
    }


def form_deletion_view(form_id: str, erased: int, waiting: bool) -> dict[str, object]:
    """A form deleted: how many of its submissions were erased, and whether its
    destinations wait for their `submission.deleted` events to be delivered."""
    return {
        "form_id": form_id,
        "deleted": True,
        "erased_submissions": erased,
        "waiting_for_deliveries": waiting,
    }


def mail_preview_view(kind: str, parts: MailParts) -> dict[str, object]:
    """A mail as a form's templates make it of a sample submission."""
    return {"kind": kind, "subject": parts.subject, "text": parts.text, "html": parts.html}


def key_view(key: ApiKey) -> dict[str, object]:
    return {
        "key_id": key.key_id,
        "workspace_id": key.workspace_id,
        "prefix": key.prefix,
        "created_at": _time(key.created_at),
        "revoked_at": _time(key.revoked_at),
        "revoked": key.revoked,
        "scopes": [scope.value for scope in scopes_in_order(key.scopes)],
    }


def submission_view(
    submission: Submission, files: list[dict[str, object]] | None = None
) -> dict[str, object]:
    """`files`: the files as `Submissions.files_view` describes them; without links if not given."""
    return {
        "submission_id": submission.submission_id,
        "form_id": submission.form_id,
        "status": submission.status.value,
        "subject": submission.subject,
        "reply_to": submission.reply_to,
        "data": submission.data,
        "files": files if files is not None else [f.describe(None) for f in submission.files],
        "created_at": submission.created_at.isoformat(),
        "spam_score": submission.spam_score,
        # For the owner only: the sender's answers never hold the score nor these.
        "spam_reasons": list(submission.spam_reasons),
    }


def endpoint_view(endpoint: WebhookEndpoint, *, full_url: bool) -> dict[str, object]:
    """Never the secret: it is printed once, by `webhook add`. The URL in full for those
    who may manage webhooks (`full_url`: an operator, an owner, a `manage` key); for the
    others (a `read` key) its scheme and host only, with `url_redacted` true."""
    return {
        "endpoint_id": endpoint.endpoint_id,
        "form_id": endpoint.form_id,
        "url": endpoint.url if full_url else endpoint.redacted_url,
        "url_redacted": not full_url,
        "include_flagged": endpoint.include_flagged,
        "enabled": endpoint.enabled,
        "created_at": _time(endpoint.created_at),
        "disabled_at": _time(endpoint.disabled_at),
    }


def recipient_view(recipient: NotificationRecipient) -> dict[str, object]:
    return {
        "recipient_id": recipient.recipient_id,
        "form_id": recipient.form_id,
        "email": recipient.email,
        "created_at": _time(recipient.created_at),
        "status": recipient.status.value,
    }


def delivery_view(delivery: Delivery) -> dict[str, object]:
    return {
        "delivery_id": delivery.delivery_id,
        "event_id": delivery.event_id,
        "kind": delivery.kind.value,
        "destination_id": delivery.destination_id,
        "state": delivery.state.value,
        "attempts": delivery.attempts,
        "next_attempt_at": _time(delivery.next_attempt_at),
        "last_error": delivery.last_error,
        "created_at": _time(delivery.created_at),
        "delivered_at": _time(delivery.delivered_at),
        "dead_at": _time(delivery.dead_at),
    }


def attempt_view(attempt: DeliveryAttempt) -> dict[str, object]:
    # Never the destination's URL nor the payload: the store keeps neither.
    return {
        "attempted_at": _time(attempt.attempted_at),
        "outcome": attempt.outcome.value,
        "status_code": attempt.status_code,
        "error": attempt.error,
    }


def delivery_record_view(record: DeliveryRecord) -> dict[str, object]:
    """A delivery as an owner reads it: `delivery_view`'s keys (`attempts` the count),
    its event's type and ids, and `attempt_log`, each attempt oldest first."""
    return {
        **delivery_view(record.delivery),
        "event_type": record.event_type.value,
        "submission_id": record.submission_id or None,  # none for a webhook.test or mail.test
        "form_id": record.form_id,
        "attempt_log": [attempt_view(a) for a in record.attempts],
    }


def submission_detail_view(detail: SubmissionDetail) -> dict[str, object]:
    """A submission with its files' fresh links and every delivery of its events."""
    return {
        **submission_view(detail.submission, detail.files),
        "deliveries": [delivery_record_view(r) for r in detail.deliveries],
    }


def outbox_event_view(row: OutboxRow) -> dict[str, object]:
    # The ids and times only; the payload holds what the visitor typed.
    event = row.event
    return {
        "event_id": event.event_id,
        "event_type": event.event_type.value,
        "submission_id": event.submission_id,
        "form_id": event.form_id,
        "workspace_id": event.workspace_id,
        "created_at": _time(event.created_at),
        "published_at": _time(row.published_at),
    }


def workspace_usage_view(usage: WorkspaceUsage, storage_ceiling: int) -> dict[str, object]:
    """A workspace with this month's count against its ceiling, and the bytes of files it
    keeps against the most it may keep."""
    return {
        **workspace_view(usage.workspace),
        "usage": {
            "period": usage.period,
            "used": usage.used,
            "ceiling": usage.ceiling,
            "limit": usage.limit,
            "forms": _form_usage_views(usage),
        },
        "storage": {"used": usage.storage_used, "ceiling": storage_ceiling},
    }


def usage_view(usage: WorkspaceUsage) -> dict[str, object]:
    """A workspace's month as the API answers it: its plan, its count against its limit
    and ceiling, and each form's share."""
    return {
        "workspace_id": usage.workspace.workspace_id,
        "plan": usage.workspace.plan.value,
        "period": usage.period,
        "used": usage.used,
        "limit": usage.limit,
        "ceiling": usage.ceiling,
        "forms": _form_usage_views(usage),
    }


def _form_usage_views(usage: WorkspaceUsage) -> list[dict[str, object]]:
    return [
        {"form_id": f.form_id, "used": f.used, "honeypot_hits": f.honeypot_hits}
        for f in usage.forms
    ]


def created_key_view(created: CreatedKey) -> dict[str, object]:
    # The one shape that holds the key itself: it is kept only as a hash from here on.
    return {**key_view(created.key), "api_key": created.secret}


def retried_dead_view(endpoint_id: str, retried: int) -> dict[str, object]:
    """What retrying an endpoint's dead deliveries did: how many are due again."""
    return {"endpoint_id": endpoint_id, "retried": retried}


def created_endpoint_view(created: CreatedEndpoint) -> dict[str, object]:
    # The one shape that holds the secret; receivers verify signatures with it.
    # Only who may add a webhook is shown this: the URL in full.
    return {**endpoint_view(created.endpoint, full_url=True), "secret": created.secret}


def outbox_view(outbox: Outbox, *, dead_only: bool = False) -> dict[str, object]:
    """The deliveries and how many there are; without `dead_only`, the events as well and
    how many wait for the relay."""
    document: dict[str, object] = {
        "deliveries": [delivery_view(d) for d in outbox.deliveries],
        "total": outbox.total,
    }
    if not dead_only:
        document["events"] = [outbox_event_view(row) for row in outbox.events]
        document["waiting"] = outbox.waiting
    return document
