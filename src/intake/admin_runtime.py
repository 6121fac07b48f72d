"""A management command's composition: the storage's resources (resources.py), and the
owner-side services made of them (service/admin/services.py). Unlike the other
compositions it is no container: a command's start is what scripts pay each time, and
dependency-injector's import (which looks for pydantic, werkzeug, starlette and PyYAML
wherever they are installed) would add to it more than the command itself takes
(docs/architecture.md, "Compositions").

A command opens nothing else: no rate limiter (and so no Redis), no challenge client, no
relay senders, none of which it uses; the relay is composed in relay_runtime.py, a
serving process in serve_runtime.py. Nothing is built at import time, and what only
some commands use (the HTTP client behind a webhook's host check, a database driver) is
imported when used.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from attrs import frozen

from intake.adapters.system import SecureIdSource, SystemClock
from intake.adapters.templates.pool import shared_renderer
from intake.config import Settings
from intake.domain.signing import DownloadSigner
from intake.ports.blobs import BlobStore
from intake.ports.clock import Clock
from intake.ports.ids import IdSource
from intake.ports.store import Store
from intake.ports.store_opening import StoreOpening
from intake.resources import blobs_resource, signer_resource, store_resource
from intake.service.admin import OwnerServices, owner_services
from intake.service.purge import Purge
from intake.service.spam_knowledge import SpamKnowledge


@frozen
class AdminRuntime:
    """The parts a management command holds while it runs."""

    settings: Settings
    store: Store
    clock: Clock
    blobs: BlobStore | None
    signer: DownloadSigner
    services: OwnerServices
    purge: Purge  # `intake purge`'s housekeeping


async def _resolve_host(host: str, port: int) -> list[str]:
    # The resolver lives with the webhook sender, whose module loads an HTTP client:
    # only the commands that add a webhook pay for it.
    from intake.adapters.webhook_http import system_resolver  # noqa: PLC0415

    return await system_resolver(host, port)


def make_owner_services(
    settings: Settings,
    *,
    store: Store,
    clock: Clock,
    id_source: IdSource,
    blobs: BlobStore | None,
    signer: DownloadSigner,
    spam_knowledge: SpamKnowledge | None = None,
    spam_reports: bool | None = None,
) -> OwnerServices:
    """The owner-side services, as every composition builds them; a serving process
    shares its `spam_knowledge` with its pipeline. `spam_reports`: whether triage is
    reported to Akismet (unset: when it is configured)."""
    return owner_services(
        store,
        clock,
        id_source,
        settings.plans,
        webhook_allow_private=settings.webhook_allow_private,
        webhook_resolver=_resolve_host,
        blobs=blobs,
        signer=signer,
        telegram_api_url=settings.telegram_api_url,
        destination_limits=settings.destination_limits,
        template_renderer=shared_renderer(),
        spam_knowledge=spam_knowledge,
        spam_reports=settings.akismet_on if spam_reports is None else spam_reports,
    )


@asynccontextmanager
async def open_admin_runtime(
    settings: Settings, opening: StoreOpening = StoreOpening.WRITE
) -> AsyncIterator[AdminRuntime]:
    """Opens the store as `opening` says (ports/store_opening.py), then the blob store
    and the signer, and closes them in the opposite order on exit."""
    clock = SystemClock()
    async with AsyncExitStack() as stack:
        enter = stack.enter_async_context
        store = await enter(asynccontextmanager(store_resource)(settings, opening))
        blobs = await enter(asynccontextmanager(blobs_resource)(settings, clock))
        signer = await enter(asynccontextmanager(signer_resource)(settings, store))
        services = make_owner_services(
            settings,
            store=store,
            clock=clock,
            id_source=SecureIdSource(),
            blobs=blobs,
            signer=signer,
        )
        purge = Purge(store.submissions, store.forms, blobs, clock, store.users)
        yield AdminRuntime(settings, store, clock, blobs, signer, services, purge)
