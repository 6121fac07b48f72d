"""PasswordHasher over argon2-cffi: argon2id, the library's recommended parameters
(RFC 9106's second choice: 64 MiB, 3 passes), run in a worker thread."""

from __future__ import annotations

import asyncio

from argon2 import PasswordHasher as _Argon2
from argon2 import Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError


class Argon2PasswordHasher:
    def __init__(self, *, time_cost: int = 3, memory_cost: int = 65536) -> None:
        # Tests may ask for less work; production keeps the defaults.
        self._argon2 = _Argon2(time_cost=time_cost, memory_cost=memory_cost, type=Type.ID)

    async def hash(self, password: str) -> str:
        return await asyncio.to_thread(self._argon2.hash, password)

    async def verify(self, password_hash: str, password: str) -> bool:
        return await asyncio.to_thread(self._check, password_hash, password)

    def _check(self, password_hash: str, password: str) -> bool:
        try:
            return self._argon2.verify(password_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
