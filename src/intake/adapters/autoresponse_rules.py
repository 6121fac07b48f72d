"""What the three stores do alike for the autoresponder and for forward-only forms, at
the fan-out: which events earn a confirmation mail, the ids of its record and delivery,
and the limits each store checks in the fan-out's own transaction.

A confirmation goes, as one more `email` delivery of a `submission.created` event, to
the submission's validated reply-to address, when the form asks for it, the submission
was accepted at once (a released one is answered by the owner, not by a machine days
later), no confirmation went to that address from that form in the past hour, and the
form has sent fewer than its hourly limit in the past hour. Each store counts the sent
under a lock on the form (SQLite's write lock; a PostgreSQL advisory lock), so relays
running at once never go past either limit. The address is kept only as a hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TypeVar

from attrs import frozen

from intake.adapters.delivery_rules import delivery_id
from intake.domain import ids
from intake.domain.deliveries import DestinationKind
from intake.domain.form_messages import AUTORESPONSE_PREFIX, AUTORESPONSE_WINDOW, FormMessages
from intake.domain.mailboxes import mailbox
from intake.domain.model import EventType, OutboxEvent
from intake.domain.notifications import autoresponse_address

_ID_BYTES = 16
# The fan-out's time as each store writes it (a datetime, or SQLite's text).
When = TypeVar("When")


@frozen
class Autoresponse:
    """One confirmation the fan-out may queue, if the limits allow."""

    autoresponse_id: str
    event_id: str
    form_id: str
    address_hash: str
    hourly_limit: int

    def delivery_id(self) -> str:
        return delivery_id(self.event_id, DestinationKind.EMAIL, self.autoresponse_id)

    def delivery_row(self, fanned_out_at: When) -> tuple[str, str, str, str, When, When]:
        """Its delivery, as the SQL stores' fan-out rows are: id, event, kind,
        destination, created and due at the fan-out's time."""
        kind, when = DestinationKind.EMAIL.value, fanned_out_at
        return (self.delivery_id(), self.event_id, kind, self.autoresponse_id, when, when)


def address_hash(address: str) -> str:
    """The mailbox the per-address limit counts (domain/mailboxes.py: in any case,
    without a `+tag`, Gmail's dots and googlemail.com folded), hashed, so that spellings
    cannot multiply the confirmations one inbox gets."""
    return hashlib.sha256(mailbox(address).encode()).hexdigest()


# An erasure on request takes the autoresponder's records of the address with the rest:
# on the workspace's forms, by the hash the per-address limit counts (the
# autoresponses_address index, form by form).
FORGET_ADDRESS = """
    DELETE FROM autoresponses
    WHERE address_hash = ? AND form_id IN (SELECT form_id FROM forms WHERE workspace_id = ?)
"""


def _released(event: OutboxEvent) -> bool:
    """A release's event is queued when the owner releases the submission; an accepted
    submission's is queued with it, at its own time."""
    return event.payload.get("created_at") != event.created_at.isoformat()


def autoresponses(
    events: Iterable[OutboxEvent], forms: Mapping[str, FormMessages], default_limit: int
) -> list[Autoresponse]:
    """The confirmations the events may earn, before the limits are counted."""
    chosen = []
    for event in events:
        messages = forms.get(event.form_id)
        if event.event_type is not EventType.CREATED or messages is None:
            continue
        if not messages.autoresponse or _released(event):
            continue
        address = autoresponse_address(event.payload)
        if address is None:
            continue
        digest = hashlib.sha256(event.event_id.encode()).digest()[:_ID_BYTES]
        chosen.append(
            Autoresponse(
                autoresponse_id=ids.prefixed_id(AUTORESPONSE_PREFIX, digest),
                event_id=event.event_id,
                form_id=event.form_id,
                address_hash=address_hash(address.addr_spec),
                hourly_limit=messages.hourly_limit(default_limit),
            )
        )
    return chosen


def window_start(now: datetime) -> datetime:
    return now - AUTORESPONSE_WINDOW


def forwarded(events: Iterable[OutboxEvent], forms: Mapping[str, FormMessages]) -> list[str]:
    """The submissions of forward-only forms whose accepted event is being fanned out:
    each erased once every delivery of its events is done (delivered or dead)."""
    return [
        event.submission_id
        for event in events
        if event.event_type is EventType.CREATED
        and event.submission_id
        and (messages := forms.get(event.form_id)) is not None
        and messages.forward_only
    ]


def mailed(messages: FormMessages | None) -> bool:
    """Whether the form's notification recipients are mailed."""
    return messages is None or messages.mail_notifications
