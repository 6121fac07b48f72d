from __future__ import annotations

from typing import Protocol

from intake.domain.sealing import SealedPlace


class Sealer(Protocol):
    """Encrypts the secrets a store keeps (challenge, webhook and download-link secrets)
    under the operator's key, bound to where each is stored (domain/sealing.py)."""

    @property
    def key_id(self) -> str:
        """The id of the key new values are sealed under."""
        ...

    def seal(self, plaintext: bytes, place: SealedPlace) -> str:
        """`plaintext` sealed under the current key for `place`."""
        ...

    def open(self, stored: str, place: SealedPlace) -> bytes:
        """A stored value's plaintext: a sealed value opened with whichever configured key
        it names (SealingError when none opens it for `place`), a plain one (written by
        an older version, not sealed yet) as it is."""
        ...

    def seal_text(self, plaintext: str, place: SealedPlace) -> str: ...

    def open_text(self, stored: str, place: SealedPlace) -> str: ...
