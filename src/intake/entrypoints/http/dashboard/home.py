"""The dashboard's first page: the invitations waiting for the user, to accept or decline;
then the forms of each of their workspaces, a page of each, with this month's counts
and a chart of each form's last 30 days (every listed form's counts in one query).
`?workspace=ID&cursor=C` pages through one workspace's forms. An owner also finds a
way to make a new form, and, until a workspace is set up, its first steps ticked off
as they are done (one query per workspace, WorkspaceRepository.setup)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlencode

from attrs import frozen
from starlette.requests import Request
from starlette.responses import Response

from intake.domain.model import Form
from intake.domain.users import Membership, Role
from intake.entrypoints.http.dashboard import web
from intake.entrypoints.http.dashboard.charts import list_charts
from intake.service.accounts import SignedIn
from intake.service.admin import AdminError, OwnerServices
from intake.service.admin.short_lists import ShortPage

FORMS_PER_PAGE = 50


@frozen
class NewFormAttempt:
    """A new form refused: the workspace, the name typed and why, shown by its control."""

    workspace_id: str
    name: str
    error: str


@web.requires_sign_in
async def home(request: Request, signed: SignedIn) -> Response:
    return await render(request, signed)


async def render(
    request: Request, signed: SignedIn, attempt: NewFormAttempt | None = None, status: int = 200
) -> Response:
    """The page; `attempt`, a new form refused, shown by its workspace's control."""
    wanted = request.query_params.get("workspace", "")
    cursor = request.query_params.get("cursor") or None
    chosen = [m for m in signed.memberships if not wanted or m.workspace_id == wanted]
    if wanted and not chosen:
        return web.page(request, "not_found.html", {}, status=404)
    services = web.runtime(request).services
    error = None
    try:
        pages = [await services.forms.page(m.workspace_id, FORMS_PER_PAGE, cursor) for m in chosen]
    except AdminError:  # a cursor this page did not make: its first page, saying so
        pages = [await services.forms.page(m.workspace_id, FORMS_PER_PAGE, None) for m in chosen]
        error, status = "That page of forms is not one this list gave; showing the first.", 422
    listed = [form.form_id for page in pages for form in page.items]
    # The rest of the page's reads go to the store as three lines at once, each on a
    # connection of its own: the charts' counts (every workspace's forms in one query),
    # the largest, then overlap the workspaces' months rather than wait for them. Three
    # at most, however many workspaces: the pool serves the submissions too.
    charts, entries, invitations = await asyncio.gather(
        list_charts(request, listed),
        _entries(services, chosen, pages),
        web.accounts(request).invitations.mine(signed),
    )
    for entry in entries:
        for row in _rows(entry):
            row["chart"] = charts[row["form"].form_id]
    context = {
        "csrf": signed.csrf,
        "email": signed.user.email,
        "invitations": invitations,
        "workspaces": entries,
        "paged": cursor is not None and error is None,
        "error": error,
        "chart_zone": web.runtime(request).settings.dashboard_timezone.key,
        "attempt": attempt,
        # What the last post did, as its redirect says.
        "deleted": attempt is None and request.query_params.get("deleted") == "1",
    }
    return web.page(request, "home.html", context, status=status)


def _rows(entry: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = entry["forms"]
    return rows


async def _entries(
    services: OwnerServices, chosen: Sequence[Membership], pages: Sequence[ShortPage[Form]]
) -> list[dict[str, Any]]:
    """Each workspace's part of the page, one after the other."""
    return [await _entry(services, m, page) for m, page in zip(chosen, pages, strict=True)]


async def _entry(
    services: OwnerServices, membership: Membership, page: ShortPage[Form]
) -> dict[str, Any]:
    workspace_id = membership.workspace_id
    month = await services.workspaces.month_counts(workspace_id)
    next_url = None
    if page.next_cursor is not None:
        next_url = (
            web.PREFIX + "?" + urlencode({"workspace": workspace_id, "cursor": page.next_cursor})
        )
    return {
        "workspace": await services.workspaces.get(workspace_id),
        "role": membership.role.value,
        "forms": [{"form": form, "month": month.forms.get(form.form_id)} for form in page.items],
        "month_start": month.since.date().isoformat(),
        "next_url": next_url,
        "first_steps": await _first_steps(services, membership, page.items),
    }


async def _first_steps(
    services: OwnerServices, membership: Membership, forms: Sequence[Form]
) -> list[dict[str, Any]] | None:
    """An owner's checklist for a workspace not yet set up (None once every step is
    done, and for a member): each step ticked from what the store holds. A submission
    is the sign that a page posts to the form: intake never fetches the owner's site."""
    if membership.role is not Role.OWNER:
        return None
    setup = await services.workspaces.setup(membership.workspace_id)
    if setup.has_form and setup.has_submission and setup.has_destination:
        return None
    settings = f"{web.PREFIX}/forms/{quote(forms[0].form_id, safe='')}/settings" if forms else ""
    return [
        {"text": "Create a form", "done": setup.has_form, "href": ""},
        {
            "text": "Put its HTML on your site and send a test submission",
            "done": setup.has_submission,
            "href": settings + "#snippet-title" if settings else "",
        },
        {
            "text": "Add a notification: a mail recipient, a webhook or a chat",
            "done": setup.has_destination,
            "href": settings + "/mail" if settings else "",
        },
    ]
