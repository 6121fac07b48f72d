"""The one rule by which a workspace reaches an object of its own by id: an id no store
could hold, a missing object and another workspace's are all the same "not found", so an
id never tells whether it exists elsewhere."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from intake.domain.model import Form
from intake.service.admin.errors import NotFoundError
from intake.service.admin.forms import FormAdmin

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


class OwnershipAdmin(FormAdmin):
    async def owned_form(self, workspace_id: str, form_id: str) -> Form:
        return await owned(workspace_id, form_id, "form", self._store.forms.get, workspace_of)
