"""API key management: creating, revoking and listing a workspace's keys."""

from __future__ import annotations

from attrs import frozen

from intake.domain import ids
from intake.domain.model import SUBMIT_ONLY, ApiKey, Scope
from intake.ports.clock import Clock
from intake.ports.store import Store
from intake.service.admin.errors import AdminError, NotFoundError
from intake.service.admin.mint import IdMint
from intake.service.admin.ownership import Ownership
from intake.service.admin.short_lists import Position, ShortPage, short_page
from intake.service.admin.workspaces import existing_workspace


@frozen
class CreatedKey:
    key: ApiKey
    secret: str  # shown once, never stored


class Keys:
    def __init__(self, store: Store, clock: Clock, mint: IdMint, ownership: Ownership) -> None:
        self._store = store
        self._clock = clock
        self._mint = mint
        self._owned = ownership

    async def create(self, workspace_id: str, scopes: frozenset[Scope] = SUBMIT_ONLY) -> CreatedKey:
        """A key with `scopes` (submit only unless told): shown once, kept as a hash."""
        if not scopes:
            raise AdminError("a key needs at least one scope", field="scopes")
        await existing_workspace(self._store.workspaces, workspace_id)
        secret = ids.api_key(self._mint.random_bytes(ids.API_KEY_RANDOM_BYTES))
        key = ApiKey(
            key_id=self._mint.id("key"),
            workspace_id=workspace_id,
            key_hash=ids.hash_secret(secret),
            prefix=secret[: len(ids.API_KEY_PREFIX) + 6],
            created_at=self._clock.now(),
            scopes=frozenset(scopes),
        )
        await self._store.api_keys.add(key)
        return CreatedKey(key, secret)

    async def revoke(self, key_id: str) -> ApiKey:
        """Revokes the key at once (any workspace's, by id); the key as it is after."""
        if not await self._store.api_keys.revoke(key_id, self._clock.now()):
            raise NotFoundError(f"no API key {key_id!r}")
        key = await self._store.api_keys.get(key_id)
        assert key is not None
        return key

    async def owned(self, workspace_id: str, key_id: str) -> ApiKey:
        """The workspace's key `key_id`; another workspace's is as missing as none."""
        return await self._owned.api_key(workspace_id, key_id)

    async def all(self, workspace_id: str) -> list[ApiKey]:
        """The workspace's keys, the revoked ones too (never their secrets)."""
        await existing_workspace(self._store.workspaces, workspace_id)
        return await self._store.api_keys.list(workspace_id)

    async def page(self, workspace_id: str, limit: int, cursor: str | None) -> ShortPage[ApiKey]:
        """`limit` of the workspace's keys after `cursor`, newest first."""
        return short_page(await self.all(workspace_id), _key_position, limit, cursor)


def _key_position(key: ApiKey) -> Position:
    return (key.created_at, key.key_id)
