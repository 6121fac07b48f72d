"""Secrets sealed at rest: where a sealed value lives, and how it reads.

A sealed value is text, `sealed:v1:<key id>:<nonce and ciphertext, base64url>`: it names
the key that opens it, so values under an old key and a new one can sit side by side
while keys rotate. Its place (table, column, row) is the associated data of the
encryption: a value copied into another row or column does not open there.
"""

from __future__ import annotations

import base64
import binascii

from attrs import frozen

from intake.domain.errors import StorageUnavailable

SEALED_PREFIX = "sealed:v1:"
KEY_BYTES = 32
_KEY_FORM = "a secret key is 32 random bytes in base64url (43 characters)"


class SecretKeyError(ValueError):
    """A key that is not 32 bytes of base64url: the message never shows the key."""


class SealingError(StorageUnavailable):
    """A sealed value that does not open: changed, moved to another place, or sealed under
    a key that is not configured. The message names the place and key id, never a
    secret. A storage failure to what uses the store (a 503, a delivery tried again
    later): nothing a client sent can cause it, and a process given the key can read it."""


@frozen
class SealedPlace:
    """Where a sealed value is stored: a column of one row, by its primary key."""

    table: str
    column: str
    row: str

    def associated_data(self) -> bytes:
        # NUL never occurs in table, column or key names: the three parts stay apart.
        return f"intake-sealed-v1\0{self.table}\0{self.column}\0{self.row}".encode()

    def __str__(self) -> str:
        return f"{self.table}.{self.column} of {self.row}"


def is_sealed(stored: str) -> bool:
    return stored.startswith(SEALED_PREFIX)


def sealed_key_id(stored: str) -> str | None:
    """The id of the key a sealed value was sealed under; None for a plain value."""
    if not is_sealed(stored):
        return None
    key_id, _, _ = stored[len(SEALED_PREFIX) :].partition(":")
    return key_id


def parse_key(text: str) -> bytes:
    """A key's bytes from its base64url text, padding optional; SecretKeyError otherwise."""
    cleaned = text.strip()
    try:
        key = base64.urlsafe_b64decode(cleaned + "=" * (-len(cleaned) % 4))
    except (binascii.Error, ValueError):
        raise SecretKeyError(_KEY_FORM) from None
    if len(key) != KEY_BYTES:
        raise SecretKeyError(_KEY_FORM)
    return key
