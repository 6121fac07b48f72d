"""The columns whose values the SQL stores keep sealed (domain/sealing.py), and the
sealing and opening of the objects that hold them, once for both stores.

A value is sealed as it is written and opened as it is read, so every object above the
store holds the plain secret. `intake secrets rotate` and `intake migrate` seal again
every column listed in SEALED_COLUMNS.
"""

from __future__ import annotations

import attrs
from attrs import frozen

from intake.domain.chat import ChatDestination
from intake.domain.deliveries import WebhookEndpoint
from intake.domain.model import Form
from intake.domain.sealing import SEALED_PREFIX, SealedPlace
from intake.ports.deliveries import Claim, ClaimedDelivery
from intake.ports.forms import FormContext
from intake.ports.sealer import Sealer


@frozen
class SealedColumn:
    """A column of sealed values, in a table whose primary key is the one column `key`.
    `binary`: the column holds bytes (BLOB, bytea) rather than text."""

    table: str
    column: str
    key: str
    binary: bool = False

    def place(self, row: str) -> SealedPlace:
        return SealedPlace(self.table, self.column, row)


CHALLENGE_SECRETS = SealedColumn("forms", "challenge_secret", "form_id")
WEBHOOK_SECRETS = SealedColumn("webhook_endpoints", "secret", "endpoint_id")
# A webhook's URL may carry the receiver's token in its path or query, as a chat's does.
WEBHOOK_URLS = SealedColumn("webhook_endpoints", "url", "endpoint_id")
SHARED_SECRETS = SealedColumn("secrets", "value", "name", binary=True)
CHAT_SECRETS = SealedColumn("chat_destinations", "secret", "destination_id")
SEALED_COLUMNS: tuple[SealedColumn, ...] = (
    CHALLENGE_SECRETS,
    WEBHOOK_SECRETS,
    WEBHOOK_URLS,
    SHARED_SECRETS,
    CHAT_SECRETS,
)
_SEALED_BYTES = SEALED_PREFIX.encode("ascii")


def sealed_column(table: str, column: str) -> SealedColumn:
    """The listed column; ValueError for any other (its names go into SQL)."""
    for found in SEALED_COLUMNS:
        if (found.table, found.column) == (table, column):
            return found
    raise ValueError(f"{table}.{column} is not a sealed column")


def sealed_form(form: Form, sealer: Sealer) -> Form:
    if form.challenge is None:
        return form
    place = CHALLENGE_SECRETS.place(form.form_id)
    challenge = attrs.evolve(form.challenge, secret=sealer.seal_text(form.challenge.secret, place))
    return attrs.evolve(form, challenge=challenge)


def opened_form(form: Form, sealer: Sealer) -> Form:
    if form.challenge is None:
        return form
    place = CHALLENGE_SECRETS.place(form.form_id)
    challenge = attrs.evolve(form.challenge, secret=sealer.open_text(form.challenge.secret, place))
    return attrs.evolve(form, challenge=challenge)


def opened_context(context: FormContext | None, sealer: Sealer) -> FormContext | None:
    if context is None:
        return None
    return attrs.evolve(context, form=opened_form(context.form, sealer))


def sealed_endpoint(endpoint: WebhookEndpoint, sealer: Sealer) -> WebhookEndpoint:
    row = endpoint.endpoint_id
    return attrs.evolve(
        endpoint,
        url=sealer.seal_text(endpoint.url, WEBHOOK_URLS.place(row)),
        secret=sealer.seal_text(endpoint.secret, WEBHOOK_SECRETS.place(row)),
    )


def opened_endpoint(endpoint: WebhookEndpoint, sealer: Sealer) -> WebhookEndpoint:
    """A URL kept plain by a version that did not seal it opens as it is, until `intake
    migrate` seals it."""
    row = endpoint.endpoint_id
    return attrs.evolve(
        endpoint,
        url=sealer.open_text(endpoint.url, WEBHOOK_URLS.place(row)),
        secret=sealer.open_text(endpoint.secret, WEBHOOK_SECRETS.place(row)),
    )


def sealed_chat(destination: ChatDestination, sealer: Sealer) -> ChatDestination:
    place = CHAT_SECRETS.place(destination.destination_id)
    return attrs.evolve(destination, secret=sealer.seal_text(destination.secret, place))


def opened_chat(destination: ChatDestination, sealer: Sealer) -> ChatDestination:
    place = CHAT_SECRETS.place(destination.destination_id)
    return attrs.evolve(destination, secret=sealer.open_text(destination.secret, place))


def opened_claim(claim: Claim, sealer: Sealer) -> Claim:
    return attrs.evolve(claim, leased=[_opened_claimed(item, sealer) for item in claim.leased])


def _opened_claimed(item: ClaimedDelivery, sealer: Sealer) -> ClaimedDelivery:
    if item.chat is not None:
        return attrs.evolve(item, chat=opened_chat(item.chat, sealer))
    if item.endpoint is None:
        return item
    return attrs.evolve(item, endpoint=opened_endpoint(item.endpoint, sealer))


def sealed_shared_secret(name: str, secret: bytes, sealer: Sealer) -> bytes:
    return sealer.seal(secret, SHARED_SECRETS.place(name)).encode("ascii")


def opened_shared_secret(name: str, stored: bytes, sealer: Sealer) -> bytes:
    if not stored.startswith(_SEALED_BYTES):
        return stored  # kept before secrets were sealed: `intake migrate` seals it
    return sealer.open(stored.decode("ascii"), SHARED_SECRETS.place(name))
