"""The resources every use of intake may open, each an async generator that opens one
port and closes it: the store, the blob store that keeps uploaded files (INTAKE_BLOB_URL;
None when unset, and then no form can take files) and the signer of download links,
whose secret every process of a deployment shares: INTAKE_DOWNLOAD_SECRET, else one
made once and kept in the database.

Each is a `providers.Resource` of every container (containers.py), which opens them as
it starts and closes them, dependents first, as it stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from intake.config import ConfigError, Settings
from intake.config.variables import DATABASE_URL
from intake.domain.errors import StorageUnavailable
from intake.domain.sealing import SecretKeyError
from intake.domain.signing import DownloadSigner
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.sealer import Sealer
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.service.schema import Schema

log = logging.getLogger("intake")

# The name under which the store keeps the download-link secret.
DOWNLOAD_SECRET_NAME = "download-links"  # noqa: S105 - a name, not the secret
DOWNLOAD_SECRET_BYTES = 32


async def store_resource(
    settings: Settings, opening: StoreOpening = StoreOpening.PREPARE
) -> AsyncIterator[Store]:
    try:
        store = await _opened_store(settings, opening)
    except ConfigError:
        raise  # a ValueError too, naming its variable already
    except ValueError as error:
        # A store refuses a URL it cannot use with a plain ValueError, which names no
        # credentials.
        raise ConfigError(f"{DATABASE_URL.name}: {error}") from None
    try:
        yield store
    finally:
        await store.close()


async def _opened_store(settings: Settings, opening: StoreOpening) -> Store:
    # Imported only when chosen: a deployment loads the drivers it uses.
    store: Store
    if settings.is_sqlite:
        from intake.adapters.sqlite import open_sqlite_store  # noqa: PLC0415

        store = await open_sqlite_store(
            settings.database_url,
            create=opening is not StoreOpening.READ,
            # Unset, the store reads (or makes) the key file once the database is found.
            sealer=None if settings.secret_key is None else sealer_for(settings),
        )
    elif settings.is_postgres:
        from intake.adapters.postgres import open_postgres_store  # noqa: PLC0415

        store = await open_postgres_store(
            settings.database_url,
            sealer=sealer_for(settings),
            max_size=settings.database_pool_size,
            pool_timeout=settings.database_pool_timeout,
            wait_for_server=opening is StoreOpening.SERVE,
            require_schema=opening in (StoreOpening.WRITE, StoreOpening.READ),
        )
    else:
        raise ConfigError(
            f"{DATABASE_URL.name}: unsupported database {settings.database_url.split(':')[0]!r}"
        )
    return store


open_store = asynccontextmanager(store_resource)

NO_KEY = (
    "INTAKE_SECRET_KEY is not set: PostgreSQL keeps secrets sealed under it; make one with"
    " `intake secrets generate-key` and set it in every process"
)


def sealer_for(settings: Settings) -> Sealer:
    """The sealer of the configured store: INTAKE_SECRET_KEY, with INTAKE_SECRET_KEYS_OLD
    still opening what they sealed. SQLite without a key uses the key file beside it;
    PostgreSQL without one is refused (ConfigError), never given a key of its own."""
    from intake.adapters.sealing import AeadSealer  # noqa: PLC0415 - only when a store opens

    if settings.is_sqlite:
        from intake.adapters.sqlite.connection import database_path  # noqa: PLC0415
        from intake.adapters.sqlite.key_file import embedded_sealer  # noqa: PLC0415

        database = database_path(settings.database_url)
        try:
            return embedded_sealer(database, settings.secret_key, settings.secret_keys_old)
        except SecretKeyError as error:  # names the key file, never its content
            raise ConfigError(str(error)) from None
    if settings.secret_key is None:
        raise ConfigError(NO_KEY)
    return AeadSealer.from_keys(settings.secret_key, settings.secret_keys_old)


def new_secret_key() -> str:
    """A new key for INTAKE_SECRET_KEY (`intake secrets generate-key`)."""
    from intake.adapters.sealing import generate_key  # noqa: PLC0415 - only when asked

    return generate_key()


@asynccontextmanager
async def open_schema(settings: Settings) -> AsyncIterator[Schema]:
    """The store alone, made if missing, for bringing its schema up to date: `intake
    migrate` opens nothing else, whose parts would read tables not made yet."""
    async with open_store(settings, StoreOpening.PREPARE) as store:
        yield Schema(store, sealer_for(settings))


async def blobs_resource(settings: Settings, clock: Clock) -> AsyncIterator[BlobStore | None]:
    if settings.blob_url is None:
        yield None
        return
    from intake.adapters.blobs.factory import open_blob_store  # noqa: PLC0415 - only when used

    try:
        blobs = open_blob_store(settings.blob_url, clock=clock)
    except ValueError as error:  # its message names no credentials: the URL holds none
        raise ConfigError(f"INTAKE_BLOB_URL: {error}") from None
    try:
        yield blobs
    finally:
        await blobs.aclose()


_UNREAD = "the download-link secret has not been read from the database yet"
# How often a process that could not read the secret as it started tries again.
SECRET_RETRY_SECONDS = 1.0


class _PendingSigner(DownloadSigner):
    """Stands in while the stored secret cannot be read (a database not yet migrated, or
    unreachable as the process started): until a background task has read it, it makes
    and accepts no link, and says so as a storage failure (a 503, a delivery tried again
    later), never with a link that no other process would accept. Once read, it signs
    as the others do."""

    def loaded(self) -> DownloadSigner | None:
        signer: DownloadSigner | None = self.__dict__.get("_loaded")
        return signer

    def load(self, secret: bytes) -> None:
        # The class is frozen; the one late value lives outside its fields.
        self.__dict__["_loaded"] = DownloadSigner(secret, self.base_url, self.ttl)

    def signing_secret(self) -> bytes:
        signer = self.loaded()
        if signer is None:
            raise StorageUnavailable(_UNREAD)
        return signer.secret


async def _read_secret(store: Store) -> bytes:
    return await store.secrets.get_or_create(
        DOWNLOAD_SECRET_NAME, os.urandom(DOWNLOAD_SECRET_BYTES)
    )


async def _load_later(store: Store, pending: _PendingSigner) -> None:
    while True:
        await asyncio.sleep(SECRET_RETRY_SECONDS)
        try:
            pending.load(await _read_secret(store))
        except StorageUnavailable:
            continue
        log.info("download-link secret read; download links are available")
        return


async def signer_resource(settings: Settings, store: Store) -> AsyncIterator[DownloadSigner]:
    base_url = settings.public_base_url
    ttl = timedelta(seconds=settings.download_ttl)
    if settings.download_secret is not None:
        yield DownloadSigner(settings.download_secret.encode("utf-8"), base_url, ttl)
        return
    try:
        secret = await _read_secret(store)
    except StorageUnavailable as error:
        # A serving worker may open before the database answers, or before it is
        # migrated: it must still open, and read the secret once it can.
        log.info(
            "download links wait for the database: %s",
            _UNREAD,
            extra={"error": str(error) or type(error).__name__},
        )
        pending = _PendingSigner(os.urandom(DOWNLOAD_SECRET_BYTES), base_url, ttl)
        task = asyncio.create_task(_load_later(store, pending))
        try:
            yield pending
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        return
    yield DownloadSigner(secret, base_url, ttl)
