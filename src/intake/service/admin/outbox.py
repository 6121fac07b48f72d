"""The outbox as an operator sees it (`Deliveries.outbox`)."""

from __future__ import annotations

from attrs import frozen

from intake.domain.deliveries import Delivery
from intake.ports.submissions import OutboxRow


@frozen
class Outbox:
    """The outbox as an operator sees it: events and their deliveries, as many as asked
    for, and how many there are in all: `total` deliveries (dead ones only, when only
    those were asked for) and `waiting` events not yet fanned out."""

    events: list[OutboxRow]
    deliveries: list[Delivery]
    total: int
    waiting: int
