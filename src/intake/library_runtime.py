"""What intake as a library runs on (`Intake.open`): everything a serving process holds,
and the relay with its senders, so that a program can both submit and deliver in one
process. Any port may be replaced through `PortOverrides`.

Nothing is built at import time; `open_runtime` opens the resources and closes them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Unpack

import attrs
from attrs import frozen

from intake.config import Settings
from intake.ports.senders import Mailer, WebhookSender
from intake.ports.store_opening import StoreOpening
from intake.relay_runtime import enter_senders, make_relay
from intake.resources import Storage
from intake.serve_runtime import ServeOverrides, ServeRuntime, enter_serving
from intake.service.relay import Relay

__all__ = ["PortOverrides", "Runtime", "open_runtime"]


class PortOverrides(ServeOverrides, total=False):
    """The ports a test or a library user may replace, by name, in `open_runtime` and
    `Intake.open`: a serving process's, and the relay's senders."""

    webhook_sender: WebhookSender | None
    mailer: Mailer | None


@frozen
class Runtime(ServeRuntime):
    """A serving process's parts, and the relay that delivers what they accept."""

    webhook_sender: WebhookSender
    mailer: Mailer | None
    relay: Relay


@asynccontextmanager
async def open_runtime(
    settings: Settings | None = None,
    *,
    store_opening: StoreOpening = StoreOpening.PREPARE,
    **overrides: Unpack[PortOverrides],
) -> AsyncIterator[Runtime]:
    """Opens everything, any port given replacing its adapter, and closes it on exit. A
    store or blob store passed in stays open: whoever made it closes it. `store_opening`
    says what the store may make and must find (ports/store_opening.py)."""
    chosen = settings if settings is not None else Settings.from_env()
    serving_ports = ServeOverrides(
        store=overrides.get("store"),
        clock=overrides.get("clock"),
        id_source=overrides.get("id_source"),
        rate_limiter=overrides.get("rate_limiter"),
        challenge=overrides.get("challenge"),
        blobs=overrides.get("blobs"),
        spam_opinion=overrides.get("spam_opinion"),
    )
    async with AsyncExitStack() as stack:
        serving = await enter_serving(stack, chosen, store_opening, serving_ports)
        senders = await enter_senders(
            stack,
            chosen,
            webhook_sender=overrides.get("webhook_sender"),
            mailer=overrides.get("mailer"),
            # The serving parts' own client: one for the process.
            spam_opinion=serving.spam_opinion,
        )
        storage = Storage(serving.store, serving.blobs, serving.signer)
        yield Runtime(
            **attrs.asdict(serving, recurse=False),
            webhook_sender=senders.webhook_sender,
            mailer=senders.mailer,
            relay=make_relay(chosen, storage, serving.clock, senders),
        )
