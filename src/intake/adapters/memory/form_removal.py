"""A form's deletion in the in-memory store (FormRepository.mark_deleted, .deleted,
.remove_deleted), as the SQL stores do it: marked and disabled at once, removed with its
destinations once nothing of it is left to erase or to deliver."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, TypeVar

from attrs import evolve

from intake.adapters.memory.tables import Tables, utc
from intake.domain.deliveries import DeliveryState


class _OfForm(Protocol):
    @property
    def form_id(self) -> str: ...


_Row = TypeVar("_Row", bound=_OfForm)


def _drop_of_form(table: dict[str, _Row], form_id: str) -> None:
    for key in [k for k, row in table.items() if row.form_id == form_id]:
        del table[key]


def mark_deleted(tables: Tables, form_id: str, at: datetime) -> bool:
    form = tables.forms.get(form_id)
    if form is None or form_id in tables.deleted_forms:
        return False
    tables.deleted_forms[form_id] = utc(at)
    del tables.form_by_key[form.public_form_key]
    # As the SQL stores: a key no request can carry.
    tables.forms[form_id] = evolve(form, enabled=False, public_form_key=f"deleted:{form_id}")
    return True


def deleted(tables: Tables, after: str, limit: int) -> list[str]:
    return sorted(f for f in tables.deleted_forms if f > after)[:limit]


def _removable(tables: Tables, form_id: str) -> bool:
    if form_id not in tables.deleted_forms:
        return False
    if any(s.form_id == form_id for s in tables.submissions.values()):
        return False
    events = {row.event.event_id for row in tables.outbox.values() if row.event.form_id == form_id}
    if any(tables.outbox[event_id].published_at is None for event_id in events):
        return False
    return not any(
        d.event_id in events and d.state is DeliveryState.PENDING
        for d in tables.deliveries.values()
    )


def remove_deleted(tables: Tables, form_id: str) -> bool:
    if not _removable(tables, form_id):
        return False
    form = tables.forms.pop(form_id)
    del tables.deleted_forms[form_id]
    tables.form_by_key.pop(form.public_form_key, None)
    _drop_of_form(tables.endpoints, form_id)
    _drop_of_form(tables.recipients, form_id)
    _drop_of_form(tables.chats, form_id)
    _drop_of_form(tables.autoresponses, form_id)
    for tally in [t for t in tables.honeypot_hits if t[0] == form_id]:
        del tables.honeypot_hits[tally]
    return True
