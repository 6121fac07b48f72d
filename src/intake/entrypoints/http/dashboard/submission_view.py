"""What the submission page shows beyond the API's view of it: each value folded when
long, and each delivery named by where it goes (never a webhook's full URL: the URL's
path may carry the receiver's token, so its host alone, as elsewhere for readers)."""

from __future__ import annotations

from attrs import frozen

from intake.domain.deliveries import DestinationKind
from intake.service.admin import DeliveryTargets

FOLD_CHARACTERS = 600  # a longer value is folded ...
FOLD_LINES = 12  # ... as is one of more lines
HEAD_CHARACTERS = 300  # what a folded value shows until opened
HEAD_LINES = 6

KIND_NAMES = {
    DestinationKind.WEBHOOK.value: "Webhook",
    DestinationKind.EMAIL.value: "Mail",
    DestinationKind.CHAT.value: "Chat",
}


@frozen
class ShownValue:
    """A value as the page shows it: `text` in full, and `head`, its start, when it is
    long enough to fold behind a "Show all" (None: shown whole)."""

    text: str
    head: str | None

    @property
    def length(self) -> int:
        return len(self.text)


def shown_value(value: object) -> ShownValue:
    text = value if isinstance(value, str) else str(value)
    lines = text.splitlines()
    if len(text) <= FOLD_CHARACTERS and len(lines) <= FOLD_LINES:
        return ShownValue(text, None)
    head = "\n".join(lines[:HEAD_LINES])[:HEAD_CHARACTERS]
    return ShownValue(text, head)


def fields(data: object) -> list[dict[str, object]]:
    """In the order the visitor sent them; a repeated field's values stay a list."""
    if not isinstance(data, dict):
        return []
    return [
        {
            "name": name,
            "values": [shown_value(v) for v in value] if isinstance(value, list) else None,
            "value": shown_value(value),
        }
        for name, value in data.items()
    ]


def target_name(kind: str, destination_id: str, targets: DeliveryTargets) -> str | None:
    """What may be shown of where a delivery goes; None for a destination removed since."""
    if kind == DestinationKind.WEBHOOK.value and destination_id in targets.webhooks:
        return targets.webhooks[destination_id].redacted_url
    if kind == DestinationKind.EMAIL.value and destination_id in targets.recipients:
        return targets.recipients[destination_id].email
    if kind == DestinationKind.CHAT.value and destination_id in targets.chats:
        chat = targets.chats[destination_id]
        return f"{chat.app.value} ({chat.shown_target})"
    return None


def timeline(
    deliveries: list[dict[str, object]], targets: DeliveryTargets, *, may_retry: bool
) -> list[dict[str, object]]:
    """The submission's deliveries (the API's view of each), oldest first, each with its
    kind and destination named, and whether this user may retry it from the page: an
    owner, a delivery given up or waiting after a failed attempt (a new one is due
    already)."""
    shown = []
    for delivery in sorted(deliveries, key=lambda d: (str(d["created_at"]), str(d["delivery_id"]))):
        kind = str(delivery["kind"])
        shown.append(
            delivery
            | {
                "kind_name": KIND_NAMES.get(kind, kind),
                "target": target_name(kind, str(delivery["destination_id"]), targets),
                "retry": may_retry and _retriable(delivery),
            }
        )
    return shown


def _retriable(delivery: dict[str, object]) -> bool:
    state, attempts = delivery["state"], delivery["attempts"]
    return state == "dead" or (state == "pending" and isinstance(attempts, int) and attempts > 0)
