"""Paging a short list held whole (a workspace's forms, a form's webhook endpoints and
mail recipients): the same keyset rule and cursor as the store-backed listings, newest
first by (created_at, id), so an item added or removed between pages moves no other."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Generic, TypeVar

from attrs import frozen

from intake.service.admin.errors import AdminError
from intake.service.admin.inputs import CURSOR, LIMIT

T = TypeVar("T")
Position = tuple[datetime, str]

# An item stored before its kind had a creation time sorts as the oldest.
NO_TIME = datetime.min.replace(tzinfo=UTC)


@frozen
class ShortPage(Generic[T]):
    """Items, newest first, and the cursor of the page after; None: this is the last."""

    items: tuple[T, ...]
    next_cursor: str | None


def _cursor_of(position: Position) -> str:
    created_at, item_id = position
    raw = json.dumps([created_at.isoformat(), item_id], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _position(cursor: str) -> Position:
    """Where the page after `cursor` starts. A cursor is only ever one this module made;
    anything else is refused, naming the parameter."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created_at, item_id = json.loads(raw)
        moment = datetime.fromisoformat(created_at)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise AdminError("not a cursor this listing gave", field=CURSOR) from None
    if moment.tzinfo is None or not isinstance(item_id, str):
        raise AdminError("not a cursor this listing gave", field=CURSOR)
    return (moment, item_id)


def short_page(
    items: Iterable[T], position: Callable[[T], Position], limit: int, cursor: str | None
) -> ShortPage[T]:
    """`limit` of `items` after `cursor`, newest first by `position`."""
    if limit < 1:
        raise AdminError("a page holds at least one item", field=LIMIT)
    after = _position(cursor) if cursor is not None else None
    ordered = sorted(items, key=position, reverse=True)
    if after is not None:
        ordered = [item for item in ordered if position(item) < after]
    page = tuple(ordered[:limit])
    more = len(ordered) > limit
    return ShortPage(page, _cursor_of(position(page[-1])) if more else None)
