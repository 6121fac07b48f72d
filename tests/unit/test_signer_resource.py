"""The download-link signer of a process that could not read the shared secret as it
started: no link until it has, and links as every other process makes them after."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from typing import cast

import pytest

from intake import resources
from intake.adapters.memory import InMemoryStore
from intake.config import Settings
from intake.domain.errors import StorageUnavailable
from intake.ports.secrets import SecretRepository
from intake.ports.store import Store

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 1, 15, 12, tzinfo=UTC)


class _Secrets:
    """The store's secrets, unreachable for the first `failures` reads."""

    def __init__(self, inner: SecretRepository, failures: int) -> None:
        self._inner = inner
        self.failures = failures

    async def get_or_create(self, name: str, candidate: bytes) -> bytes:
        if self.failures:
            self.failures -= 1
            raise StorageUnavailable("database unreachable")
        return await self._inner.get_or_create(name, candidate)


class _Store:
    """Just what the signer reads of a store."""

    def __init__(self, failures: int) -> None:
        self.secrets = _Secrets(InMemoryStore().secrets, failures)


async def test_links_wait_for_the_secret_then_match_another_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(resources, "SECRET_RETRY_SECONDS", 0.01)
    flaky = _Store(failures=3)
    store = cast(Store, flaky)
    settings = Settings(base_url="https://forms.example")
    async with contextlib.asynccontextmanager(resources.signer_resource)(settings, store) as signer:
        with pytest.raises(StorageUnavailable):
            signer.link("sub_1", 0, NOW)
        with pytest.raises(StorageUnavailable):
            signer.verify("sub_1", 0, "9999999999", "x", NOW)
        for _ in range(200):
            if flaky.secrets.failures == 0:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        link = signer.link("sub_1", 0, NOW)

    # Another process, started once the database answers, reads the same secret.
    async with contextlib.asynccontextmanager(resources.signer_resource)(
        settings, store
    ) as healthy:
        assert healthy.link("sub_1", 0, NOW) == link
        expires, signature = (part.split("=")[1] for part in link.url.split("?")[1].split("&"))
        assert healthy.verify("sub_1", 0, expires, signature, NOW)
