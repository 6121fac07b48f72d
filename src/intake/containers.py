"""What every way intake runs is composed from: a dependency-injector container whose
settings are the one `Settings` (config/settings.py), whose clock and ids are the
system's, and whose resources are the store, the blob store and the download-link
signer (resources.py). Each way adds its own: serve_runtime.py, relay_runtime.py and
library_runtime.py. A management command opens the same resources without a container
(admin_runtime.py), which would slow every command's start.

A test or a program replaces any part by overriding its provider, before the container
starts: `container.store.override(InMemoryStore())`. A part given so is used as it is,
never opened or closed by the container: whoever made it closes it.

`opened` starts a container's resources, gives the services a way of running calls, and
stops the resources on exit, each after the ones made from it (a signer before its
store). The container itself goes no further than the function that composes: entry
points receive the services they call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import TypeVar

from dependency_injector import containers, providers

from intake.adapters.system import SecureIdSource, SystemClock
from intake.config import Settings
from intake.domain.signing import DownloadSigner
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.resources import blobs_resource, signer_resource, store_resource

Services = TypeVar("Services")


class StorageContainer(containers.DeclarativeContainer):
    """The parts every composition holds. `settings` and `opening` (what the store may
    make and must find, ports/store_opening.py) are given as it is made."""

    settings = providers.Dependency(instance_of=Settings)
    opening = providers.Dependency(instance_of=StoreOpening)
    clock: providers.Provider[Clock] = providers.Singleton[Clock](SystemClock)
    id_source: providers.Provider[IdSource] = providers.Singleton[IdSource](SecureIdSource)
    store: providers.Provider[Store] = providers.Resource(
        store_resource, settings=settings, opening=opening
    )
    blobs: providers.Provider[BlobStore | None] = providers.Resource(
        blobs_resource, settings=settings, clock=clock
    )
    signer: providers.Provider[DownloadSigner] = providers.Resource(
        signer_resource, settings=settings, store=store
    )


async def _done(started: Awaitable[None] | None) -> None:
    # A container with async resources answers with an awaitable; one without, None.
    if started is not None:
        await started


@asynccontextmanager
async def opened(
    container: StorageContainer, services: providers.Provider[Services]
) -> AsyncIterator[Services]:
    """Starts `container`'s resources, the store first, and gives what `services` makes
    of them; on exit (or a failure to start) stops every resource that started,
    dependents first."""
    try:
        # The store before the others, which start together: its opening (a pool, a
        # schema check) would otherwise share the event loop with the clients' first
        # calls, whose short timeouts (Redis's ping) it could make them run past.
        if container.store.last_overriding is None:  # a store given is open already
            await container.store.async_()
        await _done(container.init_resources())
        yield await services.async_()
    finally:
        await _done(container.shutdown_resources())
