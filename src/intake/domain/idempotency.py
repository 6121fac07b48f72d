"""Idempotency keys: their form, their scope and the payload fingerprint."""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from attrs import frozen

from intake.domain.client_network import ClientNetwork
from intake.domain.model import FieldData
from intake.domain.uploads import StoredFile

RETENTION = timedelta(hours=24)
MAX_KEY_LENGTH = 255


class Route(enum.StrEnum):
    PUBLIC = "public"
    SERVER = "server"


def is_valid_key(key: str) -> bool:
    """1 to 255 printable ASCII characters."""
    return 0 < len(key) <= MAX_KEY_LENGTH and all(" " <= ch <= "~" for ch in key)


def scope(route: Route, form_id: str, client: ClientNetwork | None = None) -> str:
    """Where a key is looked up. On the server route, the form: its API key's workspace
    owns it. On the public route, the form and the client network (decisions.md
    "Idempotency"): anonymous clients of one form share no keys, so none can confirm a
    guess of another's payload (200 or 409) or take a key before its owner uses it."""
    if route is Route.SERVER:
        return f"{route.value}:{form_id}"
    if client is None:
        raise ValueError("a public route's key is scoped by its client network")
    return f"{route.value}:{form_id}:{client}"


def fingerprint(
    fields: FieldData, files: Sequence[StoredFile] = (), refused: Iterable[str] = ()
) -> str:
    """The same parsed fields and values give the same print, whatever the wire format or
    the order of names; control fields are included. The order of a repeated name's
    values is kept, as it is part of what was sent. Files count by field, name and
    content, in order, and so do the fields whose file the form refused; a body without
    files prints as it always has."""
    document: object = fields
    refused_fields = sorted(set(refused))
    if files or refused_fields:
        described: dict[str, object] = {
            "fields": fields,
            "files": [[item.field, item.name, item.size, item.sha256] for item in files],
        }
        if refused_fields:
            described["refused"] = refused_fields
        document = described
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@frozen
class IdempotencyRecord:
    scope: str
    key: str
    fingerprint: str
    submission_id: str
    created_at: datetime

    def expired(self, now: datetime) -> bool:
        return now - self.created_at >= RETENTION
