"""The Sealer port with AES-256-GCM (the `cryptography` package): each value sealed with
a random 96-bit nonce under the current key, its place as associated data.

A key is 32 random bytes, written as base64url (43 characters). Its id, which a sealed
value names, is derived from the key itself: the operator configures keys alone, and a
value names the one that opens it without any table of ids to keep.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from intake.domain.sealing import (
    KEY_BYTES,
    SEALED_PREFIX,
    SealedPlace,
    SealingError,
    parse_key,
    sealed_key_id,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

NONCE_BYTES = 12
AES_KEY_SIZES = (16, 24, 32)


def _checked(key: bytes) -> bytes:
    if len(key) not in AES_KEY_SIZES:
        raise ValueError("an AES-GCM key is 128, 192 or 256 bits")
    return key


def generate_key() -> str:
    """A new key, as INTAKE_SECRET_KEY holds it."""
    return _b64(os.urandom(KEY_BYTES))


def key_id(key: bytes) -> str:
    # A digest of the key, not the key: 48 bits tell a handful of keys apart.
    return hashlib.sha256(b"intake-key-id\0" + key).hexdigest()[:12]


class AeadSealer:
    """Seals under `current`; opens what `current` or any of `old` sealed."""

    def __init__(self, current: bytes, old: Iterable[bytes] = ()) -> None:
        self._current = _checked(current)
        self._key_id = key_id(current)
        self._keys: dict[str, list[bytes]] = {self._key_id: [current]}
        for key in old:
            if key != current:
                self._keys.setdefault(key_id(key), []).append(_checked(key))
        # Made on first use: cryptography is imported then, and most `intake` commands
        # read no secret.
        self._aeads: dict[bytes, AESGCM] = {}

    def _aead(self, key: bytes) -> AESGCM:
        aead = self._aeads.get(key)
        if aead is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415

            aead = self._aeads[key] = AESGCM(key)
        return aead

    @classmethod
    def from_keys(cls, current: str, old: Iterable[str] = ()) -> AeadSealer:
        return cls(parse_key(current), [parse_key(text) for text in old])

    @property
    def key_id(self) -> str:
        return self._key_id

    def seal(self, plaintext: bytes, place: SealedPlace) -> str:
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._aead(self._current).encrypt(nonce, bytes(plaintext), place.associated_data())
        return f"{SEALED_PREFIX}{self._key_id}:{_b64(nonce + sealed)}"

    def open(self, stored: str, place: SealedPlace) -> bytes:
        named = sealed_key_id(stored)
        if named is None:
            return stored.encode("utf-8")  # written before sealing: `intake migrate` seals it
        candidates = self._keys.get(named)
        if not candidates:
            raise SealingError(f"{place}: sealed under key {named}, which is not configured")
        body = stored[len(SEALED_PREFIX) + len(named) + 1 :]
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        except (binascii.Error, ValueError):
            raise SealingError(f"{place}: not a sealed value") from None
        from cryptography.exceptions import InvalidTag  # noqa: PLC0415 - loaded by _aead

        for key in candidates:
            try:
                return self._aead(key).decrypt(
                    raw[:NONCE_BYTES], raw[NONCE_BYTES:], place.associated_data()
                )
            except (InvalidTag, ValueError):
                continue
        raise SealingError(f"{place}: does not open with key {named} (changed or moved)")

    def seal_text(self, plaintext: str, place: SealedPlace) -> str:
        return self.seal(plaintext.encode("utf-8"), place)

    def open_text(self, stored: str, place: SealedPlace) -> str:
        try:
            return self.open(stored, place).decode("utf-8")
        except UnicodeDecodeError:
            raise SealingError(f"{place}: opens to bytes that are not text") from None


# The key of stores opened by hand in this process without one (tests): they agree with
# each other and with nothing else. The composition roots always pass the configured key.
_PROCESS_KEY = os.urandom(KEY_BYTES)


def process_sealer() -> AeadSealer:
    return AeadSealer(_PROCESS_KEY)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
