"""The one rule by which a workspace reaches an object of its own by id: an id no store
could hold, a missing object and another workspace's are all the same "not found", so an
id never tells whether it exists elsewhere. `Ownership` applies it to every kind of
object an owner reaches; each service asks it, none repeats it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from intake.domain.chat import ChatDestination
from intake.domain.deliveries import DestinationKind, NotificationRecipient, WebhookEndpoint
from intake.domain.model import ApiKey, Form, Submission
from intake.ports.deliveries import DeliveryRecord
from intake.ports.store import Store
from intake.service.admin.errors import NotFoundError

T = TypeVar("T")

MAX_ID = 100  # far longer than any id intake makes


def check_plausible_id(item_id: str, what: str) -> None:
    """Not found without asking the store: an id no store could hold (PostgreSQL text
    cannot hold NUL; ids are short and printable)."""
    if not 0 < len(item_id) <= MAX_ID or not item_id.isprintable():
        raise NotFoundError(f"no {what}")


class InWorkspace(Protocol):
    @property
    def workspace_id(self) -> str: ...


async def workspace_of(item: InWorkspace) -> str:
    """The workspace of an object that names it (a form, a submission, a delivery)."""
    return item.workspace_id


async def owned(
    workspace_id: str,
    item_id: str,
    what: str,
    fetch: Callable[[str], Awaitable[T | None]],
    workspace: Callable[[T], Awaitable[str | None]],
) -> T:
    """The object `fetch` finds for `item_id`, when `workspace` says it is
    `workspace_id`'s; NotFoundError ("no <what> <id>") otherwise."""
    check_plausible_id(item_id, what)
    item = await fetch(item_id)
    if item is None or await workspace(item) != workspace_id:
        raise NotFoundError(f"no {what} {item_id!r}")
    return item


async def owned_in(
    workspace_id: str,
    item_id: str,
    what: str,
    fetch_in: Callable[[str, str], Awaitable[T | None]],
) -> T:
    """The object `fetch_in(item_id, workspace_id)` finds in the workspace, for objects
    that do not name their workspace (a destination names its form): one lookup that a
    missing id and another workspace's answer alike, with the same work.
    NotFoundError ("no <what> <id>") otherwise."""
    check_plausible_id(item_id, what)
    item = await fetch_in(item_id, workspace_id)
    if item is None:
        raise NotFoundError(f"no {what} {item_id!r}")
    return item


class Ownership:
    """A workspace's own objects, by id (the module's rule)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def form(self, workspace_id: str, form_id: str) -> Form:
        return await owned(workspace_id, form_id, "form", self._store.forms.get, workspace_of)

    async def submission(self, workspace_id: str, submission_id: str) -> Submission:
        fetch = self._store.submissions.get
        return await owned(workspace_id, submission_id, "submission", fetch, workspace_of)

    async def api_key(self, workspace_id: str, key_id: str) -> ApiKey:
        return await owned(workspace_id, key_id, "API key", self._store.api_keys.get, workspace_of)

    async def endpoint(self, workspace_id: str, endpoint_id: str) -> WebhookEndpoint:
        return await owned_in(workspace_id, endpoint_id, "webhook endpoint", self._endpoint_in)

    async def recipient(self, workspace_id: str, recipient_id: str) -> NotificationRecipient:
        what = "notification recipient"
        return await owned_in(workspace_id, recipient_id, what, self._recipient_in)

    async def chat(self, workspace_id: str, destination_id: str) -> ChatDestination:
        return await owned_in(workspace_id, destination_id, "chat destination", self._chat_in)

    async def delivery(self, workspace_id: str, delivery_id: str) -> DeliveryRecord:
        """One of the workspace's deliveries to its own destinations; a report to
        Akismet, the operator's, is not found, as a submission's detail does not show
        it."""
        fetch = self._store.deliveries.get_delivery
        record = await owned(workspace_id, delivery_id, "delivery", fetch, workspace_of)
        if record.delivery.kind is DestinationKind.AKISMET:
            raise NotFoundError(f"no delivery {delivery_id!r}")
        return record

    async def _endpoint_in(self, endpoint_id: str, workspace_id: str) -> WebhookEndpoint | None:
        return await self._store.destinations.get_endpoint(endpoint_id, workspace_id=workspace_id)

    async def _recipient_in(
        self, recipient_id: str, workspace_id: str
    ) -> NotificationRecipient | None:
        destinations = self._store.destinations
        return await destinations.get_recipient(recipient_id, workspace_id=workspace_id)

    async def _chat_in(self, destination_id: str, workspace_id: str) -> ChatDestination | None:
        return await self._store.destinations.get_chat(destination_id, workspace_id=workspace_id)
